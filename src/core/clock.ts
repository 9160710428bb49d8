import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

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
  /** Resolves once `ms` have passed on this clock; an aborted `signal` rejects it at once. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Reads the test clock file's offset; null without one. */
function testOffsetReader(): (() => number) | null {
  const file = process.env.BACKUPD_TEST_CLOCK_FILE;
  if (!file) return null;
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
  typeof __BACKUPD_TEST_CLOCK__ === 'undefined' || __BACKUPD_TEST_CLOCK__ ? testOffsetReader() : null;

/** How often a wait on the test clock looks whether the test has moved the clock past its end. */
const TEST_WAIT_STEP_MS = 50;

export const clock: Clock = {
  now(): number {
    return Date.now() + (offsetMs?.() ?? 0);
  },
  date(): Date {
    return new Date(clock.now());
  },
  async sleep(ms, signal) {
    if (!offsetMs) return sleep(ms, undefined, { signal });
    // On the test clock the wait ends once the clock reaches its end, however far the test
    // moved it meanwhile.
    const due = clock.now() + ms;
    for (let left = ms; left > 0; left = due - clock.now())
      await sleep(Math.min(left, TEST_WAIT_STEP_MS), undefined, { signal });
  },
};

/**
 * A clock that stands still at `start` (ms) until moved: for service-level tests. A wait on it
 * moves it by the wait and resolves at once.
 */
export function fixedClock(start: number): Clock & { advance(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    date: () => new Date(current),
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      current += ms;
    },
    advance(ms: number) {
      current += ms;
    },
  };
}

export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;
