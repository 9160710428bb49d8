import { defaultErrorCode, type ErrorCode, isErrorCode } from '../shared/protocol/error-codes.ts';

/** An error that carries the HTTP status and the `detail` a client sees. */
export type Detail = string | Record<string, unknown>;

/**
 * A structured detail's `status` names its case (`{status: 'offset_mismatch', next_offset}`):
 * when that is a known code, it is the answer's code too.
 */
function codeOf(status: number, detail: Detail): ErrorCode {
  if (typeof detail !== 'string' && isErrorCode(detail.status)) return detail.status;
  return defaultErrorCode(status);
}

export class AppError extends Error {
  readonly status: number;
  readonly detail: Detail;
  readonly headers: Record<string, string>;
  /** A stable snake_case name clients read instead of the wording (src/shared/protocol/error-codes.ts). */
  readonly code: ErrorCode;

  constructor(
    status: number,
    detail: Detail,
    options: { cause?: unknown; headers?: Record<string, string>; code?: ErrorCode } = {},
  ) {
    super(typeof detail === 'string' ? detail : String(detail.message ?? detail.status ?? 'error'), {
      cause: options.cause,
    });
    this.name = 'AppError';
    this.status = status;
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.code = options.code ?? codeOf(status, detail);
  }
}

export const badRequest = (detail: Detail, code?: ErrorCode) => new AppError(400, detail, { code });
export const unauthorized = (detail: Detail = 'sign in required', code?: ErrorCode) =>
  new AppError(401, detail, { code });
export const forbidden = (detail: Detail, code?: ErrorCode) => new AppError(403, detail, { code });
export const notFound = (detail: Detail, code?: ErrorCode) => new AppError(404, detail, { code });
export const conflict = (detail: Detail, code?: ErrorCode) => new AppError(409, detail, { code });
export const payloadTooLarge = (detail: Detail, code?: ErrorCode) => new AppError(413, detail, { code });
export const unavailable = (detail: Detail, code?: ErrorCode) => new AppError(503, detail, { code });
/** A `Range` outside the `sizeBytes` it asks of: 416, with the size in `Content-Range` (RFC 9110). */
export const rangeNotSatisfiable = (sizeBytes: number) =>
  new AppError(416, `range not satisfiable for ${sizeBytes} bytes`, {
    headers: { 'Content-Range': `bytes */${sizeBytes}` },
    code: 'range_not_satisfiable',
  });
export const tooManyRequests = (retryAfterSeconds: number, detail: Detail) =>
  new AppError(429, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** Wrap at a boundary: say what we were doing, keep the cause for the log. */
export function wrapError(message: string, cause: unknown): Error {
  return new Error(message, { cause });
}
