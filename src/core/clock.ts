import { readFileSync } from 'node:fs';

/**
 * The only place time is read. Tests move it: with BACKUPD_TEST_CLOCK_FILE set, the file
 * holds an offset in milliseconds that is added to the real time on every read, so a test
 * can jump a running server forward by days without sleeping.
 */
const offsetFile = process.env.BACKUPD_TEST_CLOCK_FILE;

function offsetMs(): number {
  if (!offsetFile) return 0;
  try {
    const value = Number(readFileSync(offsetFile, 'utf8').trim());
    return Number.isFinite(value) ? value : 0;
  } catch {
    return 0;
  }
}

export const clock = {
  now(): number {
    return Date.now() + offsetMs();
  },
  date(): Date {
    return new Date(clock.now());
  },
};

export const DAY_MS = 24 * 60 * 60 * 1000;
