import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { DrillOutcome } from '../../shared/protocol/drills.ts';
import { type ErrorCode, errorCodeOf } from '../../shared/protocol/error-codes.ts';
import { snapshotFilenameOf } from '../../shared/protocol/headers.ts';
import { instancePaths, uploadPaths } from '../../shared/protocol/paths.ts';
import type {
  JobList,
  ListedJob,
  ListedSnapshot,
  RequestReport,
  RestoreRequestList,
  RestoreRequestView,
  SnapshotChoice,
  SnapshotList,
} from '../../shared/protocol/recovery.ts';
import { stationStatusMeaning } from '../../shared/protocol/status-codes.ts';
import type {
  ChunkReply,
  FinalizeReply,
  FinalizeRequest,
  InitiateReply,
  InitiateRequest,
} from '../../shared/protocol/uploads.ts';
import { stationContact } from '../services/station-contact.ts';
import { type FileRange, putFile } from './file-put.ts';
import { getStream } from './stream-get.ts';

export type { FinalizeReply, InitiateReply } from '../../shared/protocol/uploads.ts';

/** A refusal or failure from the Station (status 0: no answer), with what a caller decides on. */
export class StationError extends Error {
  override name = 'StationError';
  readonly status: number;
  readonly detail: unknown;
  /** The answer's stable `code` (null: no answer, or a Station that sends none). */
  readonly code: ErrorCode | null;
  readonly retryAfterSeconds: number | null;

  constructor(
    status: number,
    detail: unknown,
    retryAfterSeconds: number | null,
    message: string,
    code: ErrorCode | null = null,
  ) {
    super(message);
    this.status = status;
    this.detail = detail;
    this.retryAfterSeconds = retryAfterSeconds;
    this.code = code;
  }

  /** Unreachable, rate-limited or a server-side failure: trying again within the operation may help. */
  get transient(): boolean {
    return stationStatusMeaning(this.status).retry;
  }
}

/** A snapshot streaming from the Station; `filename` is the Station's name for it. */
export interface Download {
  filename: string;
  size: number;
  body: Readable;
}

const REQUEST_TIMEOUT_MS = 60_000;
const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The one client of the Station's `/backup/*` protocol, authenticated with the Station token.
 * Addresses come from src/shared/protocol/paths.ts; failures are StationErrors, which
 * src/scout/upload/station-errors.ts turns into what the Scout says.
 */
export function createStationClient(baseUrl: string, token: string) {
  const base = baseUrl.replace(/\/+$/, '');

  async function send(
    method: string,
    path: string,
    body: string | FileRange | undefined,
    signal: AbortSignal | undefined,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    // Until the answer's headers arrive: a download's body then streams as long as it takes.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      REQUEST_TIMEOUT_MS,
    );
    let response: Response;
    let streamed: Readable | null = null;
    try {
      const allHeaders = { authorization: `Bearer ${token}`, ...headers };
      const signals = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
      if (method === 'STREAM') {
        const answer = await getStream(`${base}${path}`, allHeaders, signals);
        response = answer.response;
        streamed = answer.body;
      } else {
        response =
          typeof body === 'object'
            ? await putFile(`${base}${path}`, allHeaders, body, signals)
            : await fetch(`${base}${path}`, { method, headers: allHeaders, body, signal: signals });
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const cause = (error as Error).cause ?? (error as Error).message;
      const unreachable = new StationError(0, null, null, `cannot reach the Station at ${base}: ${cause}`);
      stationContact.record(unreachable, base);
      throw unreachable;
    } finally {
      clearTimeout(timer);
    }
    const refused = response.ok ? null : await refusal(response);
    stationContact.record(refused, base);
    if (refused) throw refused;
    return streamed ? Object.assign(response, { streamed }) : response;
  }

  async function json<T>(
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const response = await send(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      signal,
      body === undefined ? {} : JSON_HEADERS,
    );
    return readJson<T>(response, path);
  }

  async function download(path: string, signal: AbortSignal | undefined): Promise<Download> {
    // A GET whose body streams as node's own stream (stream-get.ts), not through a web stream.
    const response: Response & { streamed?: Readable } = await send('STREAM', path, undefined, signal);
    if (!response.streamed)
      throw new StationError(502, 'empty download', null, 'the Station sent no snapshot bytes');
    return {
      filename: snapshotFilenameOf(response.headers) ?? '',
      size: Number(response.headers.get('content-length') ?? 0),
      body: response.streamed,
    };
  }

  return {
    baseUrl: base,

    initiate: (meta: InitiateRequest, signal?: AbortSignal) =>
      json<InitiateReply>('POST', uploadPaths.initiate, meta, signal),

    /** Sends `length` bytes of `file` from `offset`, streamed from disk. */
    async chunk(
      uploadId: string,
      file: string | FileHandle,
      offset: number,
      length: number,
      signal?: AbortSignal,
    ): Promise<ChunkReply> {
      const response = await send(
        'PUT',
        uploadPaths.chunk(uploadId, offset),
        { file, offset, length },
        signal,
        {
          'content-type': 'application/octet-stream',
        },
      );
      return readJson<ChunkReply>(response, uploadPaths.chunk(uploadId, offset));
    },

    /** `body`: a streamed upload's size and SHA-256 (none for an upload that declared them). */
    finalize: (uploadId: string, body?: FinalizeRequest, signal?: AbortSignal) =>
      json<FinalizeReply>('POST', uploadPaths.finalize(uploadId), body, signal),

    /** Recovery, restore requests and drills of one Scout instance. */
    instance(scoutId: string, instanceId: string) {
      const paths = instancePaths(scoutId, instanceId);
      return {
        /** The instance's jobs with stored snapshots, by name. */
        jobs: async (signal?: AbortSignal): Promise<ListedJob[]> =>
          (await json<JobList>('GET', paths.jobs, undefined, signal)).jobs,

        /** The job's snapshots, newest first. */
        snapshots: async (jobName: string, signal?: AbortSignal): Promise<ListedSnapshot[]> =>
          (await json<SnapshotList>('GET', paths.snapshots(jobName), undefined, signal)).snapshots,

        /** Streams the chosen snapshot: an exact file, the newest with a fingerprint, or the latest. */
        download: (jobName: string, choice: SnapshotChoice, signal?: AbortSignal): Promise<Download> =>
          download(
            choice.filename
              ? paths.archive(jobName, choice.filename)
              : choice.fingerprint
                ? paths.byFingerprint(jobName, choice.fingerprint)
                : paths.latest(jobName),
            signal,
          ),

        /** Restore requests addressed to this instance (the last 7 days). */
        requests: async (signal?: AbortSignal): Promise<RestoreRequestView[]> =>
          (await json<RestoreRequestList>('GET', paths.requests, undefined, signal)).requests,

        reportRequest: (id: string, status: RequestReport, signal?: AbortSignal) =>
          json<unknown>('POST', paths.request(id), { status }, signal),

        downloadRequest: (id: string, signal?: AbortSignal) => download(paths.requestArchive(id), signal),

        reportDrill: (jobName: string, outcome: DrillOutcome, signal?: AbortSignal) =>
          json<unknown>('POST', paths.drill(jobName), outcome, signal),
      };
    },
  };
}

/** A StationError from a refusal: its detail, code and Retry-After. */
/** An answer's JSON; an answer that is not JSON is a Station error, not a crash. */
async function readJson<T>(response: Response, path: string): Promise<T> {
  const text = await response.text();
  try {
    return (text ? JSON.parse(text) : null) as T;
  } catch {
    throw new StationError(
      response.status,
      text,
      null,
      `the Station answered ${path} with no JSON`,
      'station_error',
    );
  }
}

async function refusal(response: Response): Promise<StationError> {
  const text = await response.text().catch(() => '');
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  const detail = (parsed as { detail?: unknown } | null)?.detail ?? parsed;
  const retry = Number(response.headers.get('retry-after'));
  const message = typeof detail === 'string' ? detail : JSON.stringify(detail);
  return new StationError(
    response.status,
    detail,
    Number.isFinite(retry) && retry > 0 ? retry : null,
    message,
    errorCodeOf(parsed),
  );
}

export type StationClient = ReturnType<typeof createStationClient>;
export type InstanceClient = ReturnType<StationClient['instance']>;
