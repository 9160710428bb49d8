import type { FileHandle } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { noteReceived } from '../gc-pacing.ts';

/**
 * Writing a download's bytes straight into Node's response, under the web `Response` that
 * Hono would otherwise stream chunk by chunk (each chunk a fresh buffer: page faults and
 * garbage collection, measured 2–3× slower than below over loopback).
 */

/** Bytes read from a file per write; two buffers of it are all a download holds. */
const BLOCK = 1024 * 1024;

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
 * other is being written, and reuses both until the end. Rejects when the client goes away.
 */
export async function writeFileRange(
  out: ServerResponse,
  file: FileHandle,
  start: number,
  end: number,
): Promise<void> {
  const buffers = [Buffer.allocUnsafe(BLOCK), Buffer.allocUnsafe(BLOCK)];
  let writing: Promise<void> = Promise.resolve();
  let position = start;
  for (let turn = 0; position <= end; turn ^= 1) {
    const buffer = buffers[turn] as Buffer;
    const { bytesRead } = await file.read(buffer, 0, Math.min(BLOCK, end + 1 - position), position);
    if (bytesRead === 0) throw new Error(`the file ended at ${position} of ${end + 1} bytes`);
    position += bytesRead;
    // The buffer read into now was last written two turns ago: that write has finished.
    await writing;
    if (out.destroyed) throw new Error('the client closed the connection');
    writing = written(out, buffer.subarray(0, bytesRead));
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
