import { Transform, type TransformCallback } from 'node:stream';

/** The size of the pieces the stages after a download get. */
const PIECE = 1024 * 1024;

/**
 * Gathers a stream's small pieces into pieces of `size` bytes (the last one shorter). A
 * download arrives in pieces of 16–64 KiB; passed on as they come, each was a decryption call
 * of its own and, worse, a write to zstd of its own, a round trip to the thread pool each:
 * restoring from a Station cost 50 % more main-thread CPU than from the same file on disk.
 * Pieces of `size` or more (a file read with a 1 MiB highWaterMark) pass through uncopied.
 */
export function coalescer(size = PIECE): Transform {
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
        batch ??= Buffer.allocUnsafeSlow(size);
        const copied = chunk.copy(batch, length, at);
        length += copied;
        at += copied;
        if (length === size) {
          this.push(batch);
          batch = null;
          length = 0;
        }
      }
      done();
    },
    flush(done: TransformCallback) {
      if (batch && length > 0) this.push(batch.subarray(0, length));
      batch = null;
      done();
    },
  });
}
