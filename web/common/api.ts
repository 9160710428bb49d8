/**
 * The one way the apps talk to their server: same-origin fetch with the session cookie,
 * JSON in and out, and every failure turned into an ApiError that carries the server's
 * `detail` (what the UI shows next to what caused it).
 */

import { type ErrorCode, errorCodeOf } from '../../src/shared/protocol/error-codes.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  /** The answer's stable `code` (what the UI decides by; `detail` is for people), or null. */
  readonly code: ErrorCode | null;
  /** Seconds to wait before retrying, from Retry-After on a 429. */
  readonly retryAfter: number | null;
  readonly body: unknown;

  constructor(status: number, detail: string, retryAfter: number | null, body: unknown) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
    this.body = body;
    this.code = errorCodeOf(body);
  }
}

type SignedOutListener = () => void;
const signedOutListeners = new Set<SignedOutListener>();

/** Called when any request answers 401: the shell goes back to sign-in. */
export function onSignedOut(listener: SignedOutListener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

function detailOf(status: number, body: unknown): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === 'string') return detail;
    if (detail !== undefined) return JSON.stringify(detail);
  }
  return `The server answered ${status}.`;
}

function retryMessage(detail: string, retryAfter: number | null): string {
  if (retryAfter === null) return `${detail} Try again in a moment.`;
  return `${detail} Try again in ${retryAfter} s (at ${new Date(Date.now() + retryAfter * 1000).toLocaleTimeString()}).`;
}

export interface RequestOptions {
  /** Do not treat a 401 as "signed out" (the sign-in form itself). */
  quiet401?: boolean;
  signal?: AbortSignal;
}

export async function request<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      // FormData goes out as multipart (fetch sets the boundary); anything else as JSON.
      headers:
        body === undefined || body instanceof FormData
          ? { Accept: 'application/json' }
          : { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(
      0,
      'The server cannot be reached. Check that it is running and the network is up.',
      null,
      null,
    );
  }
  const text = await response.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!response.ok) {
    const detail = detailOf(response.status, parsed);
    if (response.status === 401 && !options.quiet401) for (const listener of signedOutListeners) listener();
    if (response.status === 429) {
      const header = Number(response.headers.get('retry-after'));
      const retryAfter = Number.isFinite(header) && header > 0 ? Math.ceil(header) : null;
      throw new ApiError(429, retryMessage(detail, retryAfter), retryAfter, parsed);
    }
    throw new ApiError(response.status, detail, null, parsed);
  }
  return parsed as T;
}

export const api = {
  get: <T = unknown>(path: string, options?: RequestOptions) => request<T>('GET', path, undefined, options),
  post: <T = unknown>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('POST', path, body ?? {}, options),
  put: <T = unknown>(path: string, body?: unknown) => request<T>('PUT', path, body ?? {}),
  patch: <T = unknown>(path: string, body?: unknown) => request<T>('PATCH', path, body ?? {}),
  delete: <T = unknown>(path: string, body?: unknown) => request<T>('DELETE', path, body),
};

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
