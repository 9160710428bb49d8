import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

/** A refusal or failure from the Station, with what the uploader needs to decide. */
export class StationError extends Error {
  override name = 'StationError';
  readonly status: number;
  readonly detail: unknown;
  readonly retryAfterSeconds: number | null;

  constructor(status: number, detail: unknown, retryAfterSeconds: number | null, message: string) {
    super(message);
    this.status = status;
    this.detail = detail;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The Station could not be reached, or answered with a server-side or rate-limit failure. */
  get transient(): boolean {
    return (
      this.status === 0 ||
      this.status === 429 ||
      this.status === 502 ||
      this.status === 504 ||
      this.status === 500
    );
  }
}

export interface InitiateReply {
  upload_id: string;
  status: 'receiving' | 'complete' | 'stored';
  next_offset: number;
  archive_size_bytes: number;
  recommended_chunk_size_bytes: number;
  duplicate: boolean;
  stored_as?: string;
  pruned: string[];
}

export interface FinalizeReply {
  status: 'stored';
  stored_as: string;
  pruned: string[];
  duplicate: boolean;
  unusual?: boolean;
  unusual_reason?: string;
}

const REQUEST_TIMEOUT_MS = 60_000;

/** The Station's `/backup/...` protocol, authenticated with the Station token. */
export function createStationClient(baseUrl: string, token: string) {
  const base = baseUrl.replace(/\/+$/, '');

  async function request<T>(
    method: string,
    path: string,
    body: string | Buffer | Readable | undefined,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<{ data: T; response: Response }> {
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...headers },
        // A stream body (a chunk read from the staged file) needs half-duplex.
        ...(body instanceof Readable ? { body: Readable.toWeb(body), duplex: 'half' } : { body }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      } as RequestInit);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new StationError(
        0,
        null,
        null,
        `cannot reach the Station at ${base}: ${(error as Error).cause ?? (error as Error).message}`,
      );
    }
    if (response.ok && response.headers.get('content-type')?.includes('application/octet-stream')) {
      return { data: undefined as T, response };
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (!response.ok) {
      const detail = (parsed as { detail?: unknown } | null)?.detail ?? parsed;
      const retry = Number(response.headers.get('retry-after'));
      const message = typeof detail === 'string' ? detail : JSON.stringify(detail);
      throw new StationError(
        response.status,
        detail,
        Number.isFinite(retry) && retry > 0 ? retry : null,
        message,
      );
    }
    return { data: parsed as T, response };
  }

  return {
    baseUrl: base,
    request,
    async initiate(meta: Record<string, unknown>, signal?: AbortSignal): Promise<InitiateReply> {
      const body = JSON.stringify(meta);
      return (
        await request<InitiateReply>('POST', '/backup/uploads/initiate', body, signal, {
          'content-type': 'application/json',
        })
      ).data;
    },
    /** Sends `length` bytes of `file` from `offset`, streamed from disk. */
    async chunk(uploadId: string, file: string, offset: number, length: number, signal?: AbortSignal) {
      const path = `/backup/uploads/${encodeURIComponent(uploadId)}/chunk?offset=${offset}`;
      const body = createReadStream(file, {
        start: offset,
        end: offset + length - 1,
        highWaterMark: 256 * 1024,
      });
      return (
        await request<{ next_offset: number; status: string }>('PUT', path, body, signal, {
          'content-type': 'application/octet-stream',
          'content-length': String(length),
        })
      ).data;
    },
    /** Streams a snapshot from a recovery route; `filename` is the Station's name for it. */
    async download(
      path: string,
      signal?: AbortSignal,
    ): Promise<{ filename: string; size: number; body: Readable }> {
      const { response } = await request<undefined>('GET', path, undefined, signal);
      if (!response.body)
        throw new StationError(502, 'empty download', null, 'the Station sent no snapshot bytes');
      return {
        filename: response.headers.get('x-relay-snapshot-filename') ?? '',
        size: Number(response.headers.get('content-length') ?? 0),
        body: Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
      };
    },

    async finalize(uploadId: string, signal?: AbortSignal): Promise<FinalizeReply> {
      return (
        await request<FinalizeReply>(
          'POST',
          `/backup/uploads/${encodeURIComponent(uploadId)}/finalize`,
          undefined,
          signal,
        )
      ).data;
    },
  };
}

export type StationClient = ReturnType<typeof createStationClient>;
