import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { alignedBuffer } from '../../core/aligned-buffer.ts';
import { noteReceived } from '../gc-pacing.ts';
import { DIRECT_ALIGN } from '../storage/batch-blocks.ts';

/**
 * Writing a download's bytes straight into Node's response, under the web `Response` that
 * Hono would otherwise stream chunk by chunk (each chunk a fresh buffer: page faults and
 * garbage collection, measured 2–3× slower than below over loopback).
 */

/** Bytes read from a file per write; two buffers of it are all a download holds. */
const BLOCK = 1024 * 1024;

/**
 * Whether this process reads downloads with O_DIRECT. The disk store writes snapshots with
 * O_DIRECT (write-batches.ts), so a snapshot is not in the page cache when a restore asks for
 * it; read through the cache, the kernel then spent most of the Station's CPU copying out of
 * freshly filled cache pages: 1.4–1.8 CPU-s for the first download of a 0.63 GiB snapshot
 * against 0.3–0.5 for the next (perf: `_copy_to_iter` under `filemap_read`, 76 % of the
 * Station's samples). Read direct into page-aligned buffers it is ~0.05 CPU-s, the disk's DMA
 * doing the copy. The price: a download runs at the disk's speed even when the file is cached
 * (`bench/station.ts`, a 1 GiB download read again: 1,053–1,276 MiB/s here against 2,670–3,895
 * from the cache; three reads in flight instead of one gained nothing, the disk gives ~1.1 GB/s),
 * which is still far above what a restore takes in or a network carries. Filesystems without
 * O_DIRECT refuse it (EINVAL): then this turns off.
 */
let directReads = process.platform === 'linux';

/** A stored file opened for a download, and whether its reads go direct (see above). */
export interface DownloadFile {
  handle: FileHandle;
  direct: boolean;
}

/**
 * Opens a stored file for a download: direct where the filesystem takes it (a first block is
 * read to be sure), through the page cache otherwise. Errors of the open itself are thrown.
 */
export async function openDownload(path: string): Promise<DownloadFile> {
  if (directReads) {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECT);
    try {
      await handle.read(alignedBuffer(DIRECT_ALIGN), 0, DIRECT_ALIGN, 0);
      return { handle, direct: true };
    } catch (error) {
      await handle.close();
      if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
      directReads = false;
    }
  }
  return { handle: await open(path, 'r'), direct: false };
}

/**
 * Resolves once `bytes` are handed to the socket; rejects when the write fails or the client goes
 * away first. Node does not call a response's write callback when its connection closes with the
 * write still queued: the download then waited for ever and its file stayed open until a garbage
 * collection found it (src/station/idle-collection.ts runs none while the heap does not grow).
 */
function written(out: ServerResponse, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    if (out.destroyed) {
      reject(new Error('the client closed the connection'));
      return;
    }
    const gone = () => reject(new Error('the client closed the connection'));
    out.once('close', gone);
    out.write(bytes, (error) => {
      out.off('close', gone);
      if (error) reject(error);
      else resolve();
    });
  });
}

/**
 * Sends bytes [start, end] of an open file: reads the next block into one buffer while the
 * other is being written, and reuses both until the end. A direct file is read from block
 * boundaries (the bytes before `start` in the first block are not sent). Rejects when the
 * client goes away.
 */
export async function writeFileRange(
  out: ServerResponse,
  file: DownloadFile,
  start: number,
  end: number,
): Promise<void> {
  const buffers = [alignedBuffer(BLOCK), alignedBuffer(BLOCK)];
  let writing: Promise<void> = Promise.resolve();
  let position = start;
  for (let turn = 0; position <= end; turn ^= 1) {
    const buffer = buffers[turn] as Buffer;
    const from = file.direct ? position - (position % DIRECT_ALIGN) : position;
    const length = file.direct ? BLOCK : Math.min(BLOCK, end + 1 - position);
    const { bytesRead } = await file.handle.read(buffer, 0, length, from);
    const upTo = Math.min(bytesRead, end + 1 - from);
    if (upTo <= position - from) throw new Error(`the file ended at ${from + bytesRead} of ${end + 1} bytes`);
    const bytes = buffer.subarray(position - from, upTo);
    position = from + upTo;
    // The buffer read into now was last written two turns ago: that write has finished.
    await writing;
    if (out.destroyed) throw new Error('the client closed the connection');
    writing = written(out, bytes);
    // Awaited on the next turn; until then a failed write must not count as unhandled.
    writing.catch(() => {});
  }
  await writing;
}

/**
 * Sends a stream (a snapshot in an object store) with backpressure. Its pieces are fresh buffers
 * of each socket read from the store, paced like an upload's (gc-pacing.ts): measured, a
 * 0.25 GiB download from a Ceph bucket took the Station from 277 to 348 MiB without.
 */
export async function writeStream(out: ServerResponse, body: Readable): Promise<void> {
  body.on('data', (piece: Buffer) => noteReceived(piece.length));
  await pipeline(body, out, { end: false });
}
