/**
 * The stable `code` of every error answer (`{detail, code}`) of both roles. Clients and the web
 * UIs choose what to do and which badge to show by `code`; `detail` is for people and may change.
 * No zod here: the browser bundles import this file for its values.
 */
export const ERROR_CODES = {
  // One default per status, when nothing more specific applies.
  bad_request: 'the request is malformed or a field breaks its rule; detail names the field',
  unauthorized: 'sign-in, an automation token or a Station token is missing or not valid',
  forbidden: 'signed in, but this account or token may not do this',
  password_change_required:
    'this account must change its password first (POST /api/session/change-password); nothing else is open to it',
  not_found: 'no such route, record or snapshot',
  conflict: 'the request contradicts the current state; detail says which',
  payload_too_large: 'the body or the declared archive is larger than the server accepts',
  range_not_satisfiable: 'the requested byte range lies outside the snapshot',
  rate_limited: 'too many requests; retry after Retry-After seconds',
  insufficient_storage: 'the Station has no room for the upload',
  unavailable: 'the server cannot do this now (storage or database unavailable); retry later',
  internal: 'an unexpected failure; the server log has the cause under the request id',

  // Request checks shared by every route.
  body_too_large: 'the request body is larger than the route reads',
  nul_character: 'a path, query value or JSON string holds a NUL character',
  host_not_allowed: 'the Host header names no address this server answers for',

  // The Station's upload protocol.
  offset_mismatch: 'a chunk did not start at next_offset; resume from detail.next_offset',
  incomplete: 'finalize before every byte arrived; send from detail.next_offset, then finalize',
  checksum_mismatch:
    'the received bytes do not hash to archive_sha256; they were discarded, upload again from 0',
  size_mismatch:
    'streamed upload: finalize named another archive_size_bytes than was received; see detail.next_offset',
  already_stored: 'the upload was already finalized and stored; nothing more to send',
  uploads_paused: 'uploads are paused (on the Station, or on this Scout); the archive stays staged',

  // Station tokens.
  token_rejected: 'the Station refused the Station token (invalid, expired or revoked); mint a new one',
  binding_conflict: 'the Station token is bound to another Scout instance',
  not_bound: 'the Station token is not (yet) bound to this Scout instance',

  // Snapshots an admin protected (src/station/services/snapshots.ts).
  protected: 'the snapshot is protected; unprotect it before deleting it',
  locked: 'the snapshot is under S3 Object Lock retention until detail.locked_until',

  // Restore requests.
  expired: 'the restore request expired (one hour after it was made)',

  // The Scout's answers about its Station and its operations.
  not_configured: 'no Station configured: station_url and scout_credential are needed first',
  station_unreachable: 'the Scout could not reach the Station (network, address, TLS or timeout)',
  station_error: 'the Station failed (5xx) or answered what the Scout did not expect',
  already_running: 'another operation runs on this Scout; wait for it or cancel it',
  cannot_decrypt: 'the snapshot cannot be decrypted with this Scout key',
  snapshot_damaged: 'the snapshot is damaged (zstd or tar stream broken, or fingerprint differs)',
  unsafe_entry: 'the snapshot holds an entry that would land outside the job folder',
  disk_full: 'the disk a restore writes to is full; free space there and restore again',
  hook_failed: 'the pre-backup hook failed or timed out, so the job was skipped',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Every error answer of both roles (src/core/http/error-handler.ts): `detail` says what is wrong
 * in words (or, for the upload protocol's 409s, an object such as uploads.ts's ResumeDetail).
 */
export interface ErrorBody {
  detail: string | Record<string, unknown>;
  code: ErrorCode;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** The code of an error answer that names nothing more specific. */
export function defaultErrorCode(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 416:
      return 'range_not_satisfiable';
    case 429:
      return 'rate_limited';
    case 507:
      return 'insufficient_storage';
    case 502:
    case 503:
    case 504:
      return 'unavailable';
    default:
      return status >= 500 ? 'internal' : 'bad_request';
  }
}

/** Codes an earlier release answered under another name, by that name. */
const EARLIER_NAMES: ReadonlyMap<unknown, ErrorCode> = new Map([['paused', 'uploads_paused']]);

/** The `code` of an error answer's body, or null when it carries none (an older server). */
export function errorCodeOf(body: unknown): ErrorCode | null {
  const code = (body as { code?: unknown } | null)?.code;
  return isErrorCode(code) ? code : (EARLIER_NAMES.get(code) ?? null);
}
