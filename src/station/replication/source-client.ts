import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { AppError } from '../../core/errors.ts';
import { SOURCE_PATHS, SourceListing, type SourceSnapshot } from './source-listing.ts';

const LIST_TIMEOUT_MS = 120_000;

/** How much of a refusal's body is read: a hostile primary may send gigabytes of it. */
const REFUSAL_BYTES = 64 * 1024;

/** The start of an answer's body, at most REFUSAL_BYTES; the rest is never read. */
async function bodyStart(body: AsyncIterable<Uint8Array> | null): Promise<string> {
  const pieces: Buffer[] = [];
  let length = 0;
  for await (const piece of body ?? []) {
    pieces.push(Buffer.from(piece));
    length += piece.length;
    if (length >= REFUSAL_BYTES) break;
  }
  return Buffer.concat(pieces).subarray(0, REFUSAL_BYTES).toString();
}

/** Why the primary refused, in one line (its `detail`), never the token. */
async function refusal(
  answer: { status: number; body: AsyncIterable<Uint8Array> | null },
  what: string,
): Promise<AppError> {
  let detail = '';
  try {
    const body = JSON.parse(await bodyStart(answer.body)) as { detail?: unknown };
    detail = typeof body.detail === 'string' ? `: ${body.detail}` : '';
  } catch {
    // not JSON: the status says enough
  }
  const hint =
    answer.status === 401 || answer.status === 403
      ? ' (check replication_token: an automation token of the primary with the "replicate" scope)'
      : '';
  return new AppError(502, `the primary answered ${answer.status} to ${what}${detail}${hint}`);
}

function unreachable(url: string, error: unknown): AppError {
  const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
  return new AppError(502, `the primary at ${url} cannot be reached: ${cause}`);
}

/** Talks to the primary Station with the replica's `replicate` token. */
export function createSourceClient(base: string, token: string, signal?: AbortSignal) {
  const headers = { authorization: `Bearer ${token}` };
  const get = (url: string, head: Record<string, string>) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(target, { headers: head, ...(signal ? { signal } : {}) }, resolve);
      req.on('error', reject);
      req.end();
    });
  return {
    async list(): Promise<SourceListing> {
      let answer: Response;
      try {
        answer = await fetch(`${base}${SOURCE_PATHS.listing}`, {
          headers,
          signal: AbortSignal.any([AbortSignal.timeout(LIST_TIMEOUT_MS), ...(signal ? [signal] : [])]),
        });
      } catch (error) {
        throw unreachable(base, error);
      }
      if (!answer.ok) throw await refusal(answer, 'the snapshot listing');
      const parsed = SourceListing.safeParse(await answer.json());
      if (!parsed.success)
        throw new AppError(502, "the primary's snapshot listing is not in the expected form");
      return parsed.data;
    },

    /**
     * The bytes [start, end] of a snapshot, as they arrive: node:http(s), whose body is a Node
     * stream of the socket's own buffers (fetch's web stream copies each piece again).
     */
    async piece(snapshot: SourceSnapshot, start: number, end: number): Promise<Readable> {
      let answer: IncomingMessage;
      try {
        answer = await get(`${base}${SOURCE_PATHS.snapshot(snapshot)}`, {
          ...headers,
          range: `bytes=${start}-${end}`,
        });
      } catch (error) {
        throw unreachable(base, error);
      }
      const status = answer.statusCode ?? 0;
      if (status !== 206 && !(status === 200 && start === 0 && end === snapshot.size_bytes - 1)) {
        throw await refusal({ status, body: answer }, `the download of ${snapshot.filename}`);
      }
      return answer;
    },
  };
}

export type SourceClient = ReturnType<typeof createSourceClient>;
