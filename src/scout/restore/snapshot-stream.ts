import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress, type ZstdOptions } from 'node:zlib';
import { createAgeDecrypt } from '../archive/age.ts';
import { byteCounter } from '../archive/byte-counter.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { zstdFrameCutter } from './zstd-frames.ts';

/**
 * An encrypted snapshot as its tar stream: source → byte count → age → zstd. Errors of the
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
    createAgeDecrypt(options.keys),
    zstdFrameCutter(),
    // Stream options pass through to the Transform (the zstd typings omit them).
    createZstdDecompress({ chunkSize: 1024 * 1024, highWaterMark: 4 * 1024 * 1024 } as ZstdOptions),
    tar,
  ).catch((error: unknown) => {
    tar.destroy(error as Error);
    return error;
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
    await plumbing;
    throw error;
  }
  const failure = await plumbing;
  if (failure) throw failure;
}
