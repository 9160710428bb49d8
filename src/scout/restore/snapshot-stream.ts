import { IncomingMessage } from 'node:http';
import { PassThrough, type Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress, type ZstdDecompress, type ZstdOptions } from 'node:zlib';
import { createAgeDecrypt } from '../archive/age.ts';
import { byteCounter } from '../archive/byte-counter.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { coalescer, PIECE } from './coalescer.ts';
import { createDecodeThread, decodeThreadWorks } from './decode-thread.ts';
import { consumed, PiecePool } from './piece-pool.ts';
import { zstdFrameCutter } from './zstd-frames.ts';

/** zstd refused the decrypted bytes (not zstd, a broken frame, cut short): the snapshot is damaged. */
export class ZstdError extends Error {
  override name = 'ZstdError';
}

/** An error of Node's zlib binding (zstd's `ZSTD_error_*`, or `Z_BUF_ERROR` at a cut-off end). */
const fromZlib = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && /^(ZSTD_error|Z_)/.test(String((error as NodeJS.ErrnoException).code));

/** The size of the blocks age decrypts into (16 of its 64 KiB chunks), reused once zstd read them. */
const DECRYPTED_BLOCK = 1024 * 1024;

let threadWorks: boolean | undefined;
/** Whether restores decode on a thread of their own (asked of Node once). */
const onThread = (): boolean => {
  threadWorks ??= decodeThreadWorks();
  return threadWorks;
};

/**
 * zstd's decompressor that reports each input piece once it has read it all: Node's zlib
 * streams call a write's callback only when the compression library has taken in the whole
 * input (it keeps no reference after), and `_transform` is the one place that callback
 * passes. Only there is the end of a write known; a `write` callback would need its own pipe.
 */
function zstdReporting(done: (piece: Buffer) => void): ZstdDecompress {
  // Stream options pass through to the Transform (the zstd typings omit them).
  const zstd = createZstdDecompress({
    chunkSize: 1024 * 1024,
    highWaterMark: 4 * 1024 * 1024,
  } as ZstdOptions);
  const transform = zstd._transform.bind(zstd);
  zstd._transform = (chunk: Buffer, encoding, finish) =>
    transform(chunk, encoding, (error?: Error | null, data?: unknown) => {
      if (!error) done(chunk);
      finish(error, data);
    });
  return zstd;
}

/**
 * An encrypted snapshot as its tar stream: source → byte count → age and zstd on a thread of
 * their own (decode-thread.ts), so the restore's thread only reads the download and the tar
 * stream and writes files. On a Node without the call that thread needs (or `onThread: false`),
 * the same stages run here: 1 MiB pieces → age → zstd frames → zstd on the thread pool; both
 * give the same bytes and the same errors (test/scout/decode-thread.test.ts). Errors of the
 * decrypting stages reach the tar reader through `tar`; `plumbing` settles with the error
 * (or undefined) once the stages are done.
 */
export function snapshotTarStream(options: {
  source: Readable;
  keys: ScoutKey[];
  /** Encrypted bytes read so far (a download's progress). */
  onSourceBytes?: ((bytes: number) => void) | undefined;
  /** Decrypt and decompress on a thread of their own (decode-thread.ts); by default when this Node can. */
  onThread?: boolean;
}): { tar: PassThrough; plumbing: Promise<unknown> } {
  // Room for decompression to run ahead (on the thread pool) while the tar reader writes files.
  // Read a chunk at a time (object mode): a byte stream's reader takes all that waits as one
  // new buffer, a copy of up to 8 MiB whenever the reader fell behind, and zstd's output
  // buffers then wait for the garbage collector instead of being freed once read (tar-reader.ts).
  const tar = new PassThrough({
    writableHighWaterMark: 4 * 1024 * 1024,
    readableObjectMode: true,
    readableHighWaterMark: 4,
  });
  // A download's socket reads are this stream's alone: freed once gathered.
  const freeCopied = options.source instanceof IncomingMessage;
  const counted = byteCounter((bytes) => options.onSourceBytes?.(bytes));
  const plumbing = (
    (options.onThread ?? onThread())
      ? pipeline(options.source, counted, createDecodeThread(options.keys, { freeCopied }), tar)
      : decodeHere(options.source, counted, options.keys, freeCopied, tar)
  ).catch((error: unknown) => {
    const failure = fromZlib(error) ? new ZstdError(`zstd: ${error.message}`, { cause: error }) : error;
    tar.destroy(failure as Error);
    return failure;
  });
  return { tar, plumbing };
}

/** The decrypting stages on the restore's own thread (and zstd on the thread pool). */
function decodeHere(
  source: Readable,
  counted: Transform,
  keys: ScoutKey[],
  freeCopied: boolean,
  tar: PassThrough,
): Promise<void> {
  // Decrypted blocks come back once zstd read them: at most the few in the streams between.
  const decrypted = new PiecePool({ size: DECRYPTED_BLOCK, keep: 8 });
  // Gathered download pieces come back once age decrypted them.
  const gathered = new PiecePool({ size: PIECE, keep: 4 });
  return pipeline(
    source,
    counted,
    coalescer(PIECE, gathered, { freeCopied }),
    createAgeDecrypt(keys, { output: decrypted }),
    zstdFrameCutter(),
    zstdReporting(consumed),
    tar,
  ).finally(() => {
    decrypted.close();
    gathered.close();
  });
}

/**
 * Runs `read` over the snapshot's tar stream and settles once the decrypting stages are done:
 * a reader that stops early stops the source and every stage too; the first error of either
 * side is thrown.
 */
export async function readSnapshotTar(
  options: Parameters<typeof snapshotTarStream>[0],
  read: (tar: PassThrough) => Promise<void>,
): Promise<void> {
  const { tar, plumbing } = snapshotTarStream(options);
  try {
    await read(tar);
  } catch (error) {
    // Both ends: a source read to its end already is done for the pipeline, which then waited
    // for ever on the stages between, held back by a reader that no longer reads.
    options.source.destroy();
    tar.destroy();
    const failure = await plumbing;
    // The pipeline destroys `tar` with zstd's own error before it is wrapped as a ZstdError.
    throw failure instanceof ZstdError && failure.cause === error ? failure : error;
  }
  const failure = await plumbing;
  if (failure) throw failure;
}
