import { Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../core/clock.ts';

/**
 * The bandwidth limit of one replication run (`replication_bytes_per_second`, 0 = none): all
 * downloads of the run share one budget, so bytes pass no faster than the limit on average
 * from the run's start. A piece that would run ahead waits until its time.
 */
export function createThrottle(bytesPerSecond: number, clock: Clock) {
  const start = clock.now();
  let passed = 0;

  async function take(bytes: number): Promise<void> {
    passed += bytes;
    const due = start + (passed / bytesPerSecond) * 1000;
    const wait = due - clock.now();
    if (wait > 0) await sleep(wait);
  }

  return {
    limited: bytesPerSecond > 0,
    /** How much to ask the primary for at once: what the limit passes in 2 seconds (64 KiB at least). */
    rangeBytes: Math.max(64 * 1024, Math.floor(bytesPerSecond * 2)),
    /** A pass-through stream that holds bytes back to the limit (none: null). */
    stream(): Transform | null {
      if (bytesPerSecond <= 0) return null;
      // Pieces of a tenth of a second keep the rate even on small limits.
      const piece = Math.max(1024, Math.floor(bytesPerSecond / 10));
      return new Transform({
        async transform(chunk: Buffer, _encoding, done) {
          try {
            for (let at = 0; at < chunk.length; at += piece) {
              const part = chunk.subarray(at, at + piece);
              await take(part.length);
              this.push(part);
            }
            done();
          } catch (error) {
            done(error as Error);
          }
        },
      });
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
