import { PassThrough, type Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, type S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { AppError, badRequest, payloadTooLarge } from '../../core/errors.ts';
import { noteReceived } from '../gc-pacing.ts';
import { returnPartBuffer, takePartBuffer } from './part-buffers.ts';
import { ResumableSha256 } from './resumable-sha256.ts';
import { type SocketReads, socketReadsOf } from './socket-reads.ts';
import { StagedOffsetMismatch } from './store-errors.ts';

const MIB = 1024 * 1024;
/** Parts are at least this big (S3's own minimum is 5 MiB): fewer requests per snapshot. */
export const MIN_PART_BYTES = 16 * MIB;
const MAX_PARTS = 10_000;
const MAX_PART_BYTES = 5 * 1024 * MIB;
/** Parts per recommended chunk (s3-store.ts `chunkSizeFor`). */
export const PARTS_PER_CHUNK = 4;

/**
 * What the database keeps of an upload staged in the bucket (the session's `state`): the
 * multipart upload, its part size, the ETag of each part held (part n covers bytes
 * [(n-1)·partSize, n·partSize), the last one ends at the archive size), the bytes of the next
 * part received so far (kept in a tail object until the part is whole: clients may send
 * chunks smaller than a part), and the SHA-256 state after all of them, so any Station
 * continues the upload and its hash.
 */
export interface MultipartState {
  key: string;
  multipartId: string;
  partSize: number;
  etags: string[];
  /** Bytes of part `etags.length + 1` held in its tail object. */
  tail: number;
  /** Some tail object was written (they are removed when the upload completes). */
  tailed?: boolean;
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

export function newState(key: string, multipartId: string, partSize: number): MultipartState {
  return { key, multipartId, partSize, etags: [], tail: 0, hash: new ResumableSha256().save() };
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
  return { ...parsed, tail: parsed.tail ?? 0 } as MultipartState;
}

export function stagedBytesOf(state: MultipartState, sizeBytes: number): number {
  return Math.min(state.etags.length * state.partSize + state.tail, sizeBytes);
}

export function sha256Of(state: MultipartState): string {
  return ResumableSha256.resume(state.hash).digest();
}

/** Where the tail objects of a multipart upload live (never a snapshot key: '.' starts it). */
export function tailFolder(prefix: string, multipartId: string): string {
  return `${prefix}.staging/${encodeURIComponent(multipartId)}/`;
}

/** An error of the body stream (the client), as opposed to the bucket's. */
class BodyFailed extends Error {}

/** One part on its way to the bucket: bytes are written to `pass` as they arrive. */
interface PartInFlight {
  pass: PassThrough;
  abort: AbortController;
  /** The part's ETag, or why the bucket did not take it (never rejects). */
  done: Promise<string | Error>;
}

const storeFailed = (what: string, cause: Error) =>
  new AppError(503, `the object store did not take ${what} (${cause.name})`, { cause });

/**
 * Appends `body` at `offset`. Bytes are cut into parts of exactly `partSize` (the last ends at
 * `sizeBytes`); a part streams to the bucket while its bytes arrive and are hashed, with a copy
 * of it in memory (at most one part). When the body ends inside a part, that part is not sent:
 * its bytes so far go to the part's tail object, and the next append sends the tail first.
 * A failing body keeps what arrived; a body longer than the archive keeps nothing (400); a
 * bucket failure rejects (503).
 */
export async function appendParts(
  client: S3Client,
  where: { bucket: string; prefix: string },
  upload: { sizeBytes: number; state: string | null },
  offset: number,
  body: Readable,
): Promise<{ state: MultipartState; stagedBytes: number; keptBytes: number }> {
  const Bucket = where.bucket;
  let kept = parseState(upload.state);
  const staged = stagedBytesOf(kept, upload.sizeBytes);
  if (offset !== staged) {
    throw new StagedOffsetMismatch(staged);
  }
  const hasher = ResumableSha256.resume(kept.hash);
  /** The whole part on its way (its ETag not yet kept) and the hash state after its bytes. */
  let flying = null as { sent: PartInFlight; hash: string } | null;
  /** Parts before the one being filled: those kept, and the one in flight. */
  const before = () => kept.etags.length + (flying ? 1 : 0);
  const partNumber = () => before() + 1;
  const partStart = () => before() * kept.partSize;
  const partLength = () => Math.min(kept.partSize, upload.sizeBytes - partStart());
  const tailKey = () => `${tailFolder(where.prefix, kept.multipartId)}${partNumber()}`;
  let buffer: Buffer | null = null;
  /** Bytes of the current part in `buffer` (the tail's first). */
  let fill = 0;
  let part: PartInFlight | null = null;

  /**
   * One part's memory for the whole call: it holds the bytes of the part being filled (they
   * become its tail object if the body ends inside it). A whole part's request gets its bytes
   * from the body's own pieces, so the memory is free again as soon as the part is whole.
   */
  let memory: Buffer | null = null;
  /** Bytes of the first part held in its tail object (only the first part of a call has one). */
  let tailBytes = kept.tail;
  const loadTail = async (): Promise<Buffer> => {
    memory ??= takePartBuffer(kept.partSize);
    const room = memory.subarray(0, partLength());
    if (tailBytes > 0) {
      const answer = await client.send(
        new GetObjectCommand({ Bucket, Key: tailKey(), Range: `bytes=0-${tailBytes - 1}` }),
      );
      let at = 0;
      for await (const chunk of answer.Body as Readable) at += (chunk as Buffer).copy(room, at);
      if (at !== tailBytes)
        throw new AppError(500, `the tail of part ${partNumber()} holds ${at} of ${tailBytes} bytes`);
    }
    fill = tailBytes;
    tailBytes = 0;
    return room;
  };

  const openPart = (): PartInFlight => {
    const pass = new PassThrough({ highWaterMark: MIB });
    const abort = new AbortController();
    const command = new UploadPartCommand({
      Bucket,
      Key: kept.key,
      UploadId: kept.multipartId,
      PartNumber: partNumber(),
      Body: pass,
      ContentLength: partLength(),
    });
    const done = client.send(command, { abortSignal: abort.signal }).then(
      (answer) => answer.ETag ?? new Error('the bucket answered no ETag'),
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    // A copy: the part's memory takes the next part's bytes while this one may still be sending.
    if (buffer && fill > 0) pass.write(Buffer.from(buffer.subarray(0, fill)));
    return { pass, abort, done };
  };

  /** Streams `data` to the part's request; a promise only when it must wait for the request to drain. */
  const feed = (target: PartInFlight, data: Buffer): Promise<void> | undefined => {
    if (target.pass.write(data)) return undefined;
    return new Promise<void>((resolve) => {
      const settle = () => {
        target.pass.off('drain', settle);
        resolve();
      };
      target.pass.on('drain', settle);
      void target.done.then(settle);
    });
  };

  /** Waits for the part in flight and keeps it (its ETag and the hash after it). */
  const land = async () => {
    if (!flying) return;
    const { sent, hash } = flying;
    const etag = await sent.done;
    flying = null;
    if (etag instanceof Error) throw storeFailed(`part ${partNumber()}`, etag);
    kept = { ...kept, etags: [...kept.etags, etag], tail: 0, hash };
  };

  /**
   * A whole part is sent off, and the next one fills while the bucket finishes it: one part in
   * flight at most (the one before must have landed), so a chunk of several parts does not
   * stand still for each part's answer.
   */
  const finishPart = async (sent: PartInFlight) => {
    sent.pass.end();
    const hash = hasher.save();
    try {
      await land();
    } catch (error) {
      await dropPart(sent);
      throw error;
    }
    flying = { sent, hash };
    fill = 0;
    buffer = null;
  };

  /** Keeps the bytes of an unfinished part in its tail object. */
  const saveTail = async () => {
    if (!buffer || fill <= kept.tail) return;
    const Body = buffer.subarray(0, fill);
    await client.send(new PutObjectCommand({ Bucket, Key: tailKey(), Body, ContentLength: fill }));
    kept = { ...kept, tail: fill, tailed: true, hash: hasher.save() };
  };

  /** Before the next byte: the part's memory and request ready, or the refusal of a byte too many. */
  const prepare = async (): Promise<{ current: Buffer; sending: PartInFlight }> => {
    if (partStart() + fill >= upload.sizeBytes) {
      throw badRequest(`the body runs past archive_size_bytes (${upload.sizeBytes})`);
    }
    if (partNumber() > MAX_PARTS) {
      throw payloadTooLarge(
        `the archive outgrows ${MAX_PARTS} parts of ${kept.partSize} bytes, the most one object holds; send it again with its size declared`,
      );
    }
    buffer ??= await loadTail();
    part ??= openPart();
    return { current: buffer, sending: part };
  };

  /**
   * The body read from its socket straight into the part's memory (socket-reads.ts): each read
   * is hashed there and a copy of it streams to the bucket (the memory takes the next part's
   * bytes while this part's request may still be sending). Rejects with the body's failure as
   * BodyFailed.
   */
  const readSocket = async (reads: SocketReads) => {
    let refusal: unknown = null;
    const refuse = (error: unknown): never => {
      refusal = error;
      throw error;
    };
    await prepare();
    /** Where bytes past the archive's end are read, to be refused (400) as they arrive. */
    let beyond: Buffer | null = null;
    try {
      await reads({
        room: () => {
          if (buffer) return fill < buffer.length ? buffer.subarray(fill) : null;
          beyond ??= Buffer.allocUnsafe(64 * 1024);
          return beyond;
        },
        took: (n) => {
          if (!buffer || !part)
            return refuse(badRequest(`the body runs past archive_size_bytes (${upload.sizeBytes})`));
          const current = buffer;
          const sending = part;
          const data = current.subarray(fill, fill + n);
          hasher.update(data);
          fill += n;
          // The copy is fresh memory per read, freed by the pacer's young collections (gc-pacing.ts).
          noteReceived(n);
          const fed = feed(sending, Buffer.from(data));
          if (fill < current.length) return fed;
          return (async () => {
            await fed;
            part = null;
            await finishPart(sending);
            // The archive's last byte: no next part (a byte more is refused when it arrives).
            if (partStart() < upload.sizeBytes) await prepare();
          })().catch(refuse);
        },
      });
    } catch (error) {
      if (error === refusal) throw error;
      throw new BodyFailed('the request body failed', { cause: error });
    }
  };

  try {
    try {
      const reads = socketReadsOf(body);
      if (reads) await readSocket(reads);
      else
        for await (const piece of chunksOf(body)) {
          noteReceived(piece.length);
          let data = piece;
          while (data.length > 0) {
            const { current, sending } = await prepare();
            const room = current.length - fill;
            const take = data.length <= room ? data : data.subarray(0, room);
            hasher.update(take);
            take.copy(current, fill);
            fill += take.length;
            data = data.subarray(take.length);
            await feed(sending, take);
            if (fill === current.length) {
              part = null;
              await finishPart(sending);
            }
          }
        }
    } catch (error) {
      if (!(error instanceof BodyFailed)) {
        await dropPart(part);
        await dropPart(flying?.sent ?? null);
        throw error instanceof AppError ? error : storeFailed(`part ${partNumber()}`, error as Error);
      }
    }
    // The body ended (or failed) inside a part: that part is not sent; its bytes become the tail.
    await dropPart(part);
    await land();
    try {
      await saveTail();
    } catch (error) {
      throw storeFailed(`the tail of part ${partNumber()}`, error as Error);
    }
    const stagedBytes = stagedBytesOf(kept, upload.sizeBytes);
    return { state: kept, stagedBytes, keptBytes: stagedBytes - staged };
  } finally {
    // Every part request is settled by now: nothing reads the part's memory any more.
    if (memory) returnPartBuffer(memory);
  }
}

/**
 * A streamed upload's last part: its bytes wait in the tail object, since the part's length was
 * not known while they arrived (the archive's size comes at finalize). Sends them as the last
 * part (sending it again after an interruption replaces it) and returns the state with it.
 */
export async function sendTailPart(
  client: S3Client,
  where: { bucket: string; prefix: string },
  state: MultipartState,
): Promise<MultipartState> {
  if (state.tail === 0) return state;
  const Bucket = where.bucket;
  const PartNumber = state.etags.length + 1;
  const Key = `${tailFolder(where.prefix, state.multipartId)}${PartNumber}`;
  try {
    const tail = await client.send(new GetObjectCommand({ Bucket, Key, Range: `bytes=0-${state.tail - 1}` }));
    const Body = Buffer.from(
      await (tail.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
    if (Body.length !== state.tail)
      throw new AppError(500, `the tail of part ${PartNumber} holds ${Body.length} of ${state.tail} bytes`);
    const answer = await client.send(
      new UploadPartCommand({
        Bucket,
        Key: state.key,
        UploadId: state.multipartId,
        PartNumber,
        Body,
        ContentLength: state.tail,
      }),
    );
    if (!answer.ETag) throw new Error('the bucket answered no ETag');
    return { ...state, etags: [...state.etags, answer.ETag], tail: 0 };
  } catch (error) {
    throw error instanceof AppError ? error : storeFailed(`the last part (${PartNumber})`, error as Error);
  }
}

async function dropPart(part: PartInFlight | null): Promise<void> {
  if (!part) return;
  part.abort.abort();
  part.pass.destroy();
  await part.done;
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
