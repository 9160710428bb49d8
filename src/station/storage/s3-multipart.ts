import { PassThrough, type Readable } from 'node:stream';
import { type S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { AppError, badRequest, conflict, payloadTooLarge } from '../../core/errors.ts';
import { ResumableSha256 } from './resumable-sha256.ts';

const MIB = 1024 * 1024;
/** Parts are at least this big (S3's own minimum is 5 MiB): fewer requests per snapshot. */
export const MIN_PART_BYTES = 16 * MIB;
const MAX_PARTS = 10_000;
const MAX_PART_BYTES = 5 * 1024 * MIB;

/**
 * What the database keeps of an upload staged in the bucket (the session's `state`): the
 * multipart upload, its part size, the ETag of each part held (part n covers bytes
 * [(n-1)·partSize, n·partSize), the last one ends at the archive size) and the SHA-256 state
 * after the last of them, so that any Station continues the hash.
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

export const newHashState = (): string => new ResumableSha256().save();

export function sha256Of(state: MultipartState): string {
  return ResumableSha256.resume(state.hash).digest();
}

/** An error of the body stream (the client), as opposed to the bucket's. */
class BodyFailed extends Error {}

/** One part on its way to the bucket: bytes are written to `pass` as they arrive. */
interface PartInFlight {
  pass: PassThrough;
  length: number;
  fed: number;
  abort: AbortController;
  /** The part's ETag, or why the bucket did not take it (never rejects). */
  done: Promise<string | Error>;
}

/**
 * Appends `body` at `offset` as parts of exactly `partSize` (the last may be shorter, ending at
 * `sizeBytes`). Each part streams to the bucket while its bytes arrive and are hashed, so
 * nothing is held in memory beyond the stream buffers. Only whole parts count: a part the body
 * does not finish is aborted. A failing body keeps the parts sent before it (the result says
 * so); a body longer than the archive keeps nothing (400); a bucket failure rejects (503).
 */
export async function appendParts(
  client: S3Client,
  bucket: string,
  upload: { sizeBytes: number; state: string | null },
  offset: number,
  body: Readable,
): Promise<{ state: MultipartState; stagedBytes: number; keptBytes: number }> {
  let kept = parseState(upload.state);
  const staged = stagedBytesOf(kept, upload.sizeBytes);
  if (offset !== staged) {
    throw conflict({
      status: 'offset_mismatch',
      next_offset: staged,
      message: `the next offset is ${staged}`,
    });
  }
  const hasher = ResumableSha256.resume(kept.hash);
  let partStart = staged;
  let part: PartInFlight | null = null;

  const openPart = (): PartInFlight => {
    const length = Math.min(kept.partSize, upload.sizeBytes - partStart);
    const pass = new PassThrough({ highWaterMark: MIB });
    const abort = new AbortController();
    const command = new UploadPartCommand({
      Bucket: bucket,
      Key: kept.key,
      UploadId: kept.multipartId,
      PartNumber: kept.etags.length + 1,
      Body: pass,
      ContentLength: length,
    });
    const done = client.send(command, { abortSignal: abort.signal }).then(
      (answer) => answer.ETag ?? new Error('the bucket answered no ETag'),
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    return { pass, length, fed: 0, abort, done };
  };

  const feed = async (target: PartInFlight, data: Buffer) => {
    if (target.pass.write(data)) return;
    await new Promise<void>((resolve) => {
      const settle = () => {
        target.pass.off('drain', settle);
        resolve();
      };
      target.pass.on('drain', settle);
      void target.done.then(settle);
    });
  };

  const finishPart = async (done: PartInFlight) => {
    done.pass.end();
    const etag = await done.done;
    if (etag instanceof Error) {
      throw new AppError(503, `the object store did not take part ${kept.etags.length + 1} (${etag.name})`, {
        cause: etag,
      });
    }
    kept = { ...kept, etags: [...kept.etags, etag], hash: hasher.save() };
    partStart += done.length;
  };

  try {
    for await (const piece of chunksOf(body)) {
      let data = piece;
      while (data.length > 0) {
        if (partStart >= upload.sizeBytes)
          throw badRequest(`the body runs past archive_size_bytes (${upload.sizeBytes})`);
        part ??= openPart();
        const take = data.length <= part.length - part.fed ? data : data.subarray(0, part.length - part.fed);
        hasher.update(take);
        part.fed += take.length;
        data = data.subarray(take.length);
        await feed(part, take);
        if (part.fed === part.length) {
          const full = part;
          part = null;
          await finishPart(full);
        }
      }
    }
  } catch (error) {
    if (!(error instanceof BodyFailed)) throw error;
  } finally {
    // A part the body did not finish is not sent: the bucket never holds a short part.
    if (part) {
      part.abort.abort();
      part.pass.destroy();
      await part.done;
    }
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
