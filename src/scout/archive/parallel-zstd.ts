import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { createZstdCompress, type ZstdCompress, constants as zlibConstants } from 'node:zlib';

const BLOCK = 2 * 1024 * 1024;

/**
 * One long-lived zstd context that turns each block into a complete frame (ZSTD_e_end).
 * Reusing contexts matters: a fresh one per block leaves native memory behind until the
 * garbage collector finds its handle.
 */
function frameCompressor(level: number) {
  const stream: ZstdCompress = createZstdCompress({
    chunkSize: 1024 * 1024,
    params: { [zlibConstants.ZSTD_c_compressionLevel]: level, [zlibConstants.ZSTD_c_checksumFlag]: 1 },
  });
  let out: Buffer[] = [];
  let failure: Error | null = null;
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  stream.on('error', (error: Error) => {
    failure = error;
  });
  return {
    compress(block: Buffer): Promise<Buffer> {
      return new Promise((resolve, reject) => {
        if (failure) return reject(failure);
        stream.write(block);
        stream.flush(zlibConstants.ZSTD_e_end, () => {
          if (failure) return reject(failure);
          const frame = Buffer.concat(out);
          out = [];
          resolve(frame);
        });
      });
    },
    close: () => stream.close(),
  };
}

/**
 * zstd on every core: the input is cut into 2 MiB blocks, each compressed as its own zstd
 * frame by one of a few long-lived contexts working on the libuv thread pool, and the frames
 * are emitted in order. Concatenated frames are one valid zstd stream (`zstd -d` reads it
 * whole). Memory is bounded by the blocks in flight (one per core, at least two).
 */
export function createParallelZstd(level = 3): Transform {
  const workers = Array.from({ length: Math.max(2, availableParallelism()) }, () => frameCompressor(level));
  const inFlight: Promise<Buffer>[] = [];
  let next = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  async function cut(push: (b: Buffer) => void, final: boolean): Promise<void> {
    while (pendingBytes >= BLOCK || (final && pendingBytes > 0)) {
      const all = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending);
      const take = Math.min(BLOCK, all.length);
      // Workers are used round-robin, so a worker's previous block is always already out.
      const worker = workers[next % workers.length];
      next += 1;
      if (!worker) throw new Error('no zstd worker');
      inFlight.push(worker.compress(all.subarray(0, take)));
      const rest = all.subarray(take);
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
      while (inFlight.length >= workers.length) push(await (inFlight.shift() as Promise<Buffer>));
    }
    if (final) while (inFlight.length > 0) push(await (inFlight.shift() as Promise<Buffer>));
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      cut((b) => this.push(b), false).then(() => done(), done);
    },
    flush(done: TransformCallback) {
      cut((b) => this.push(b), true).then(
        () => done(),
        (error: Error) => done(error),
      );
    },
    destroy(error, callback) {
      for (const worker of workers) worker.close();
      callback(error);
    },
  });
}
