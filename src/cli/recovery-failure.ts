import { AppError } from '../core/errors.ts';
import { restoreFailure } from '../scout/restore/restore-service.ts';
import { StationError } from '../scout/upload/station-client.ts';
import { stationFailure } from '../scout/upload/station-errors.ts';

/** How to get a token that may recover `scoutId/instanceId` (the Station dashboard's words). */
const tokenAdvice = (instance: string) =>
  `mint a recovery token for ${instance} in the Station's dashboard (Instances → Mint a recovery token) or use the old host's token`;

/**
 * A download failure of `backupd scout restore`, said for an operator at a shell: the token
 * problems name the instance and where to get a token that may recover it.
 */
export function recoveryFailure(error: unknown, scoutId: string, instanceId: string): unknown {
  const code = error instanceof StationError ? stationFailure(error).code : null;
  if (
    error instanceof StationError &&
    (code === 'token_rejected' || code === 'forbidden' || code === 'not_bound')
  ) {
    const instance = `${scoutId}/${instanceId}`;
    const detail = typeof error.detail === 'string' ? error.detail : error.message;
    const what =
      code === 'token_rejected'
        ? `the Station does not accept this token (${detail})`
        : `this token may not recover ${instance} (the Station refused it)`;
    return new AppError(error.status, `${what}; ${tokenAdvice(instance)}`, { code });
  }
  return restoreFailure(error);
}
