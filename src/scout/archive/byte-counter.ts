import { Transform } from 'node:stream';

/** Passes bytes through and reports the running total (progress of a pipeline stage). */
export function byteCounter(onTotal: (bytes: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      onTotal(total);
      done(null, chunk);
    },
  });
}
