import type { Readable } from 'node:stream';
import { type S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { createSHA256, type IHasher } from 'hash-wasm';
import { AppError, badRequest, conflict, payloadTooLarge } from '../../core/errors.ts';

const MIB = 1024 * 1024;
/** Parts are at least this big (S3's own minimum is 5 MiB): fewer requests, one part in memory. */
export const MIN_PART_BYTES = 16 * MIB;
const MAX_PARTS = 10_000;
const MAX_PART_BYTES = 5 * 1024 * MIB;

/**
 * What the database keeps of an upload staged in the bucket (the session's `state`): the
 * multipart upload, its part size, the ETag of each part held (part n covers bytes
 * [(n-1)·partSize, n·partSize), the last one ends at the archive size) and the SHA-256 state
 * after the last of them (hash-wasm's `save()`, base64), so any Station continues the hash.
 */
export interface MultipartState {
  key: string;
  multipartId: string;
  partSize: number;
  etags: string[];
  hash: string;
}

export function partSizeFor(archiveSizeBytes: number): number {
  if (archiveSizeBytes > MAX_PARTS * MAX_PART_BYTES) {
    throw payloadTooLarge(
      `archive_size_bytes ${archiveSizeBytes} cannot be stored in the bucket: an object holds at most ${MAX_PARTS} parts of 5 GiB (about 48.8 TiB)`,
    );
  }
  return Math.max(MIN_PART_BYTES, Math.ceil(archiveSizeBytes / MAX_PARTS / MIB) * MIB);
}

export function parseState(state: string | null): MultipartState {
  const parsed = state === null ? null : (JSON.parse(state) as Partial<MultipartState>);
  if (
    typeof parsed?.multipartId !== 'string' ||
    typeof parsed.key !== 'string' ||
    !Array.isArray(parsed.etags)
  ) {
    throw new AppError(
      500,
      'the upload has no multipart upload in the bucket (its staging state is missing)',
    );
  }
  return parsed as MultipartState;
}

export function stagedBytesOf(state: MultipartState, sizeBytes: number): number {
  return Math.min(state.etags.length * state.partSize, sizeBytes);
}

export async function newHashState(): Promise<string> {
  return Buffer.from((await createSHA256()).init().save()).toString('base64');
}

async function hasherAt(hash: string): Promise<IHasher> {
  const hasher = await createSHA256();
  try {
    return hasher.load(Buffer.from(hash, 'base64'));
  } catch (cause) {
    // A state saved by another hash-wasm build: the upload must start again.
    throw new AppError(
      409,
      {
        status: 'checksum_mismatch',
        next_offset: 0,
        message: 'the saved hash state cannot be read; send the archive again',
      },
      { cause },
    );
  }
}

export async function sha256Of(state: MultipartState): Promise<string> {
  return (await hasherAt(state.hash)).digest('hex');
}

/** An error of the body stream (the client), as opposed to the bucket's. */
class BodyFailed extends Error {}

/**
 * Appends `body` at `offset` as parts of exactly `partSize` (the last may be shorter, ending at
 * `sizeBytes`), holding at most one part in memory. Only whole parts count: the bytes of an
 * unfinished part are dropped. A failing body keeps the parts sent before it (the result says
 * so); a body longer than the archive keeps nothing (400); a bucket failure rejects.
 */
export async function appendParts(
  client: S3Client,
  bucket: string,
  upload: { sizeBytes: number; state: string | null },
  offset: number,
  body: Readable,
): Promise<{ state: MultipartState; stagedBytes: number; keptBytes: number }> {
  const start = parseState(upload.state);
  const staged = stagedBytesOf(start, upload.sizeBytes);
  if (offset !== staged) {
    throw conflict({
      status: 'offset_mismatch',
      next_offset: staged,
      message: `the next offset is ${staged}`,
    });
  }
  const hasher = await hasherAt(start.hash);
  let kept: MultipartState = start;
  const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(start.partSize, upload.sizeBytes - staged)));
  let partStart = staged;
  let fill = 0;

  const sendPart = async () => {
    const partNumber = kept.etags.length + 1;
    const answer = await client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: kept.key,
        UploadId: kept.multipartId,
        PartNumber: partNumber,
        Body: buffer.subarray(0, fill),
        ContentLength: fill,
      }),
    );
    if (!answer.ETag) throw new Error(`the bucket answered no ETag for part ${partNumber}`);
    kept = {
      ...kept,
      etags: [...kept.etags, answer.ETag],
      hash: Buffer.from(hasher.save()).toString('base64'),
    };
    partStart += fill;
    fill = 0;
  };

  try {
    for await (const piece of chunksOf(body)) {
      let data = piece;
      while (data.length > 0) {
        const room = Math.min(kept.partSize, upload.sizeBytes - partStart) - fill;
        if (room <= 0) throw badRequest(`the body runs past archive_size_bytes (${upload.sizeBytes})`);
        const take = data.length <= room ? data : data.subarray(0, room);
        take.copy(buffer, fill);
        hasher.update(take);
        fill += take.length;
        data = data.subarray(take.length);
        if (take.length === room) await sendPart();
      }
    }
  } catch (error) {
    if (!(error instanceof BodyFailed)) throw error;
  }
  const stagedBytes = stagedBytesOf(kept, upload.sizeBytes);
  return { state: kept, stagedBytes, keptBytes: stagedBytes - staged };
}

async function* chunksOf(body: Readable): AsyncGenerator<Buffer> {
  const iterator = body[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = await iterator.next();
    } catch (error) {
      throw new BodyFailed('the request body failed', { cause: error });
    }
    if (next.done) return;
    yield Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value as Uint8Array);
  }
}
