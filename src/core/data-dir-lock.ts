import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Another process holds the data dir. */
export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data dir for this process: a lock file holding our pid. A lock whose process is
 * gone is taken over; a live holder makes this throw with its pid.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'backupd.lock');
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        release() {
          try {
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DataDirBusyError(`data dir ${dataDir} is in use by process ${holder}; stop it first`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new DataDirBusyError(`could not take the lock ${path}`);
}
