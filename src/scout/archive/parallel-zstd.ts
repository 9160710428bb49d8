import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { promisify } from 'node:util';
import { constants as zlibConstants, zstdCompress } from 'node:zlib';

const compress = promisify(zstdCompress);
const BLOCK = 4 * 1024 * 1024;

/**
 * zstd on every core: the input is cut into 4 MiB blocks, each compressed as its own zstd
 * frame on the libuv thread pool, and the frames are emitted in order. Concatenated frames
 * are one valid zstd stream (`zstd -d` reads it whole). Memory is bounded by the blocks in
 * flight (one per core, at least two).
 */
export function createParallelZstd(level = 3): Transform {
  const inFlight: Promise<Buffer>[] = [];
  const limit = Math.max(2, availableParallelism());
  const params = { [zlibConstants.ZSTD_c_compressionLevel]: level, [zlibConstants.ZSTD_c_checksumFlag]: 1 };
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  const submit = (block: Buffer) => inFlight.push(compress(block, { params, chunkSize: BLOCK }));

  async function cut(push: (b: Buffer) => void, final: boolean): Promise<void> {
    while (pendingBytes >= BLOCK || (final && pendingBytes > 0)) {
      const all = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending);
      const take = Math.min(BLOCK, all.length);
      submit(all.subarray(0, take));
      const rest = all.subarray(take);
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
      while (inFlight.length >= limit) push(await (inFlight.shift() as Promise<Buffer>));
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
      cut((b) => this.push(b), true).then(() => done(), done);
    },
  });
}
