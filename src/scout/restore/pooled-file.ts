import { close, open, read } from 'node:fs';
import { Readable } from 'node:stream';
import { PiecePool } from './piece-pool.ts';

/**
 * A file read in pieces of `size` bytes into a few reused blocks (piece-pool.ts): the stage
 * that reads a piece last gives it back (`consumed`), so reading a snapshot from disk
 * allocates no buffer per MiB (createReadStream allocates one per read, freed only by the
 * garbage collector). A block not given back is simply not reused.
 */
export function pooledFileStream(path: string, size = 1024 * 1024): Readable {
  const pool = new PiecePool({ size, keep: 4 });
  let fd: number | null = null;
  return new Readable({
    // One piece waits here at most: the stages after it have their own buffers.
    highWaterMark: 1,
    objectMode: false,
    construct(done) {
      open(path, 'r', (error, opened) => {
        fd = opened;
        done(error);
      });
    },
    read() {
      const block = pool.take();
      // From the current position: a pipe (`--archive /dev/stdin`) has no other.
      read(fd as number, block, 0, size, null, (error, bytes) => {
        if (error) {
          pool.give(block);
          this.destroy(error);
          return;
        }
        if (bytes === 0) {
          pool.give(block);
          this.push(null);
          return;
        }
        this.push(pool.handOn(block, bytes));
      });
    },
    destroy(error, done) {
      pool.close();
      if (fd === null) return done(error);
      close(fd, () => done(error));
    },
  });
}
