// Drives the Station's upload protocol the way a Scout does, for tests and the bench.
import { randomBytes } from 'node:crypto';
import { utcSecond } from '../../src/shared/protocol/fields.ts';
import { uploadPaths } from '../../src/shared/protocol/paths.ts';
import type { FinalizeRequest, InitiateRequest } from '../../src/shared/protocol/uploads.ts';
import { sha256 } from './hashes.ts';
import { parseBody } from './http.ts';

/** Initiation metadata, exactly as the Station reads it. */
export type ArchiveMeta = InitiateRequest;

let counter = 0;
/** Initiation metadata for `data`, with overridable fields. */
export function archiveMeta(data: Uint8Array, overrides: Partial<ArchiveMeta> = {}): ArchiveMeta {
  counter += 1;
  return {
    scout_id: 'host-a',
    scout_instance_id: 'inst0000000000000001',
    job_name: 'documents',
    fingerprint: sha256(Buffer.from(`fp-${counter}`)),
    timestamp: utcSecond(Date.UTC(2026, 10, 1, 12, 0, counter % 60)),
    archive_format: 'tar.zst',
    archive_size_bytes: data.length,
    archive_sha256: sha256(data),
    idempotency_key: `key-${randomBytes(8).toString('hex')}`,
    ...overrides,
  };
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: Uint8Array | object,
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let payload: Uint8Array | string | undefined;
  if (body instanceof Uint8Array) {
    payload = body;
    headers['content-type'] = 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  return { status: res.status, body: parseBody(await res.text()), headers: res.headers };
}

export const initiate = (url: string, token: string, meta: ArchiveMeta) =>
  call(url, 'POST', uploadPaths.initiate, token, meta);
export const putChunk = (url: string, token: string, uploadId: string, offset: number, bytes: Uint8Array) =>
  call(url, 'PUT', uploadPaths.chunk(uploadId, offset), token, bytes);
export const finalize = (url: string, token: string, uploadId: string, declared?: FinalizeRequest) =>
  call(url, 'POST', uploadPaths.finalize(uploadId), token, declared);

/**
 * A chunk PUT at `offset` that sends `length` bytes of `data` from there and then stalls, the rest never coming (to kill the
 * Station while a chunk streams in). `status` is the answer's status, or 'failed' when the
 * request died; `cancel` ends the body.
 */
export function stalledChunk(
  url: string,
  token: string,
  uploadId: string,
  data: Uint8Array,
  offset: number,
  length: number,
) {
  const part = data.subarray(offset, offset + length);
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(part);
      }
    },
  });
  const status = fetch(`${url}${uploadPaths.chunk(uploadId, offset)}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body,
    duplex: 'half',
  } as RequestInit).then(
    (res): number | 'failed' => res.status,
    () => 'failed',
  );
  return { status, cancel: () => body.cancel().catch(() => {}) };
}

/** A streamed upload's initiation: `meta` without size and checksum (given at finalize). */
export function streamedMeta(meta: ArchiveMeta): ArchiveMeta {
  const { archive_size_bytes: _size, archive_sha256: _sha, ...rest } = meta;
  return { ...rest, streamed: true };
}

/** What finalize of a streamed upload of `data` declares. */
export const declaration = (data: Uint8Array): FinalizeRequest => ({
  archive_size_bytes: data.length,
  archive_sha256: sha256(data),
});

type CallReply = Awaited<ReturnType<typeof call>>;

/**
 * PUTs `data` from `offset` on in chunks of `chunkSize` until the Station has all of it;
 * `check` sees each chunk reply before its next_offset is read.
 */
export async function sendChunks(
  url: string,
  token: string,
  uploadId: string,
  data: Uint8Array,
  offset: number,
  chunkSize: number,
  check: (reply: CallReply) => void,
): Promise<void> {
  while (offset < data.length) {
    const reply = await putChunk(url, token, uploadId, offset, data.subarray(offset, offset + chunkSize));
    check(reply);
    offset = reply.body.next_offset;
  }
}

/** Initiates, sends every chunk from next_offset, finalizes; returns the finalize reply. */
export async function upload(
  url: string,
  token: string,
  data: Uint8Array,
  meta = archiveMeta(data),
  chunkSize = 64 * 1024,
) {
  const started = await initiate(url, token, meta);
  if (started.status !== 200) return { initiate: started, finalize: null };
  if (started.body.status === 'stored') return { initiate: started, finalize: null };
  await sendChunks(url, token, started.body.upload_id, data, started.body.next_offset, chunkSize, (reply) => {
    if (reply.status !== 200) throw new Error(`chunk failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  });
  return { initiate: started, finalize: await finalize(url, token, started.body.upload_id) };
}
