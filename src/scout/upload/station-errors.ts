import { AppError, badRequest } from '../../core/errors.ts';
import { defaultErrorCode, type ErrorCode } from '../../shared/protocol/error-codes.ts';
import { stationStatusMeaning } from '../../shared/protocol/status-codes.ts';
import type { StationError } from './station-client.ts';

/** What the operator can do about each kind of refusal. */
const ADVICE: Partial<Record<ErrorCode, string>> = {
  station_unreachable: 'check station_url and the network',
  token_rejected: 'mint a new token on the Station and save it as scout_credential',
  forbidden: 'mint a Station token for this instance (or a recovery token) and save it as scout_credential',
  not_bound: 'mint a Station token for this instance (or a recovery token) and save it as scout_credential',
  binding_conflict: 'a normal Station token serves one Scout instance: mint one for this instance',
  payload_too_large: 'raise MAX_UPLOAD_BYTES on the Station or exclude files',
  insufficient_storage: 'free space on the Station',
  uploads_paused: 'resume uploads on the Station',
  unavailable: 'try again later',
  rate_limited: 'try again later',
  station_error: 'the Station log has the cause',
  expired: 'ask the Station admin for a new restore request',
};

/** A Station refusal as the Scout reports it: a stable code, a sentence, and what it means for the cycle. */
export interface StationFailure {
  code: ErrorCode;
  /** What went wrong and what to do, for `last_error` and API answers. */
  message: string;
  /** The status of the Scout's own answer: 404 and 409 pass through, the rest is a 502. */
  status: number;
  /** The operator must act (token, limit, disk); a retry alone will not help. */
  attention: boolean;
  /** The Station answered (for the upload circuit): false when unreachable or failing. */
  reached: boolean;
}

/** The Scout's code for a Station answer: the Station's specific code, else one by status. */
function scoutCode(error: StationError): ErrorCode {
  if (error.status === 0) return 'station_unreachable';
  if (error.status === 401) return 'token_rejected';
  const byStatus = defaultErrorCode(error.status);
  if (error.code && error.code !== byStatus) return error.code;
  if (error.status >= 500 && error.status !== 503 && error.status !== 507) return 'station_error';
  return byStatus;
}

/**
 * The one place the Scout turns a Station answer into its own error: backup, restore, drills
 * and restore-request polling all read it. `upload` adds that the archive stays staged.
 */
export function stationFailure(
  error: StationError,
  context: 'upload' | 'recovery' = 'recovery',
): StationFailure {
  const code = scoutCode(error);
  const meaning = stationStatusMeaning(error.status);
  const detail = typeof error.detail === 'string' ? error.detail : error.message;
  const said = error.status === 0 ? error.message : `${meaning.meaning} (${detail})`;
  const advice = ADVICE[code];
  const staged = context === 'upload' ? ' — the archive stays staged for the next cycle' : '';
  return {
    code,
    message: `${said}${advice ? `; ${advice}` : ''}${staged}`,
    status: error.status === 404 || error.status === 409 ? error.status : 502,
    attention: meaning.attention,
    reached: !(error.status === 0 || error.status >= 500),
  };
}

/** The Scout's API answer for a Station refusal: `{detail, code}` with the Scout's code. */
export function stationAppError(error: StationError): AppError {
  const failure = stationFailure(error);
  return new AppError(failure.status, failure.message, { code: failure.code, cause: error });
}

/** The answer when the Scout has no Station to ask. */
export const stationNotConfigured = () =>
  badRequest(
    'no Station is set: enter the Station URL and a Station token in Settings first (station_url, scout_credential)',
    'not_configured',
  );
