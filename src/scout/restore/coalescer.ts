import { Transform, type TransformCallback } from 'node:stream';
import { releaseNow } from '../../core/release-memory.ts';
import { consumed, type PiecePool } from './piece-pool.ts';

/** Below this, a buffer may be a slice of Node's shared pool (8 KiB slabs): never freed here. */
const FREED_MIN = 16 * 1024;

/**
 * Whether `chunk` is a copied input buffer that may be freed now: its own memory (not a slice of
 * Node's shared pool) read to its end (the slices before its end came first, so they were copied
 * already).
 */
export const readToItsEnd = (chunk: Buffer): boolean =>
  chunk.buffer.byteLength >= FREED_MIN && chunk.byteOffset + chunk.length === chunk.buffer.byteLength;

/** The size of the pieces the stages after a download get. */
export const PIECE = 1024 * 1024;

/**
 * Gathers a stream's small pieces into pieces of `size` bytes (the last one shorter). A
 * download arrives in pieces of 16–64 KiB; passed on as they come, each was a decryption call
 * of its own and, worse, a write to zstd of its own, a round trip to the thread pool each:
 * restoring from a Station cost 50 % more main-thread CPU than from the same file on disk.
 * Pieces of `size` or more (a file read with a 1 MiB highWaterMark) pass through uncopied.
 * With `pool` (blocks of `size`), the pieces are its blocks, given back by the stage that reads them;
 * a pooled input piece it copied goes back to its own pool at once. `freeCopied`: the input's
 * buffers are this stream's alone (a download's socket reads): each one copied to its end is
 * freed at once (the slices before its end came first, so they were copied already), not left
 * to the garbage collector — they were most of what the Scout's heap grew by in its own restore.
 */
export function coalescer(size = PIECE, pool?: PiecePool, options: { freeCopied?: boolean } = {}): Transform {
  if (pool && pool.size !== size) throw new Error("coalescer: the pool's blocks must be of the piece size");
  const fresh = () => (pool ? pool.take() : Buffer.allocUnsafeSlow(size));
  const handOn = (block: Buffer, length: number) =>
    pool ? pool.handOn(block, length) : block.subarray(0, length);
  let batch: Buffer | null = null;
  let length = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (length === 0 && chunk.length >= size) {
        this.push(chunk);
        done();
        return;
      }
      let at = 0;
      while (at < chunk.length) {
        batch ??= fresh();
        const copied = chunk.copy(batch, length, at);
        length += copied;
        at += copied;
        if (length === size) {
          this.push(handOn(batch, size));
          batch = null;
          length = 0;
        }
      }
      // Copied: a pooled piece (a pipe read short, pooled-file.ts) goes back to its pool; with
      // freeCopied, another buffer read to its end is freed.
      if (!consumed(chunk) && options.freeCopied && readToItsEnd(chunk)) {
        releaseNow(chunk);
      }
      done();
    },
    flush(done: TransformCallback) {
      if (batch && length > 0) this.push(handOn(batch, length));
      batch = null;
      done();
    },
  });
}
