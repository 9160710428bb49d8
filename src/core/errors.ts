/** An error that carries the HTTP status and the `detail` a client sees. */
export type Detail = string | Record<string, unknown>;

export class AppError extends Error {
  readonly status: number;
  readonly detail: Detail;
  readonly headers: Record<string, string>;
  /** A stable snake_case name clients read instead of the wording (e.g. `binding_conflict`). */
  readonly code: string | undefined;

  constructor(
    status: number,
    detail: Detail,
    options: { cause?: unknown; headers?: Record<string, string>; code?: string } = {},
  ) {
    super(typeof detail === 'string' ? detail : String(detail.message ?? detail.status ?? 'error'), {
      cause: options.cause,
    });
    this.name = 'AppError';
    this.status = status;
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.code = options.code;
  }
}

export const badRequest = (detail: Detail) => new AppError(400, detail);
export const unauthorized = (detail: Detail = 'sign in required') => new AppError(401, detail);
export const forbidden = (detail: Detail) => new AppError(403, detail);
export const notFound = (detail: Detail) => new AppError(404, detail);
export const conflict = (detail: Detail) => new AppError(409, detail);
export const payloadTooLarge = (detail: Detail) => new AppError(413, detail);
export const unavailable = (detail: Detail) => new AppError(503, detail);
export const tooManyRequests = (retryAfterSeconds: number, detail: Detail) =>
  new AppError(429, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** Wrap at a boundary: say what we were doing, keep the cause for the log. */
export function wrapError(message: string, cause: unknown): Error {
  return new Error(message, { cause });
}
