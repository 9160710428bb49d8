import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress, type ZstdOptions } from 'node:zlib';
import { createAgeDecrypt } from '../archive/age.ts';
import { byteCounter } from '../archive/byte-counter.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { coalescer } from './coalescer.ts';
import { zstdFrameCutter } from './zstd-frames.ts';

/** zstd refused the decrypted bytes (not zstd, a broken frame, cut short): the snapshot is damaged. */
export class ZstdError extends Error {
  override name = 'ZstdError';
}

/** An error of Node's zlib binding (zstd's `ZSTD_error_*`, or `Z_BUF_ERROR` at a cut-off end). */
const fromZlib = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && /^(ZSTD_error|Z_)/.test(String((error as NodeJS.ErrnoException).code));

/**
 * An encrypted snapshot as its tar stream: source → byte count → 1 MiB pieces → age → zstd. Errors of the
 * decrypting stages reach the tar reader through `tar`; `plumbing` settles with the error
 * (or undefined) once the stages are done.
 */
export function snapshotTarStream(options: {
  source: Readable;
  keys: ScoutKey[];
  /** Encrypted bytes read so far (a download's progress). */
  onSourceBytes?: ((bytes: number) => void) | undefined;
}): { tar: PassThrough; plumbing: Promise<unknown> } {
  // Room for decompression to run ahead (on the thread pool) while the tar reader writes files.
  const tar = new PassThrough({ highWaterMark: 4 * 1024 * 1024 });
  const plumbing = pipeline(
    options.source,
    byteCounter((bytes) => options.onSourceBytes?.(bytes)),
    coalescer(),
    createAgeDecrypt(options.keys),
    zstdFrameCutter(),
    // Stream options pass through to the Transform (the zstd typings omit them).
    createZstdDecompress({ chunkSize: 1024 * 1024, highWaterMark: 4 * 1024 * 1024 } as ZstdOptions),
    tar,
  ).catch((error: unknown) => {
    const failure = fromZlib(error) ? new ZstdError(`zstd: ${error.message}`, { cause: error }) : error;
    tar.destroy(failure as Error);
    return failure;
  });
  return { tar, plumbing };
}

/**
 * Runs `read` over the snapshot's tar stream and settles once the decrypting stages are done:
 * a reader that stops early stops the source too; the first error of either side is thrown.
 */
export async function readSnapshotTar(
  options: Parameters<typeof snapshotTarStream>[0],
  read: (tar: PassThrough) => Promise<void>,
): Promise<void> {
  const { tar, plumbing } = snapshotTarStream(options);
  try {
    await read(tar);
  } catch (error) {
    options.source.destroy();
    const failure = await plumbing;
    // The pipeline destroys `tar` with zstd's own error before it is wrapped as a ZstdError.
    throw failure instanceof ZstdError && failure.cause === error ? failure : error;
  }
  const failure = await plumbing;
  if (failure) throw failure;
}
