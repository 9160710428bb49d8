import { readFileSync } from 'node:fs';

/**
 * The only place time is read. Tests move it: a server started from the source with
 * BACKUPD_TEST_CLOCK_FILE set (test/helpers/server.ts sets it) adds the offset in milliseconds
 * that the file holds to the real time on every read, so a test can jump a running server
 * forward by days without sleeping. The build (scripts/build.ts) defines
 * __BACKUPD_TEST_CLOCK__ as false, so the bundle and the single executables read the real time
 * only: the file is never read and the code that reads it is dropped.
 */
declare const __BACKUPD_TEST_CLOCK__: boolean | undefined;

/** Where time comes from; services take one so rules can be tested with a fixed time. */
export interface Clock {
  now(): number;
  date(): Date;
}

/** Reads the test clock file's offset, or 0 without one. */
function testOffsetReader(): () => number {
  const file = process.env.BACKUPD_TEST_CLOCK_FILE;
  if (!file) return () => 0;
  return () => {
    try {
      const value = Number(readFileSync(file, 'utf8').trim());
      return Number.isFinite(value) ? value : 0;
    } catch {
      return 0;
    }
  };
}

// Written on the defined name itself so that esbuild folds the condition and drops the reader.
const offsetMs =
  typeof __BACKUPD_TEST_CLOCK__ === 'undefined' || __BACKUPD_TEST_CLOCK__ ? testOffsetReader() : () => 0;

export const clock: Clock = {
  now(): number {
    return Date.now() + offsetMs();
  },
  date(): Date {
    return new Date(clock.now());
  },
};

/** A clock that stands still at `start` (ms) until moved: for service-level tests. */
export function fixedClock(start: number): Clock & { advance(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    date: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
  };
}

export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;
