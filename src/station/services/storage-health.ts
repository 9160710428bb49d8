import { randomBytes } from 'node:crypto';
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface StorageInfo {
  backup_root: string;
  free_bytes: number | null;
  total_bytes: number | null;
  writable: boolean;
}

/** Space and writability (a probe file is written and removed) of the folder that holds snapshots. */
export async function storageInfo(backupRoot: string): Promise<StorageInfo> {
  const writable = (await probeWritable(backupRoot)) === null;
  try {
    const fs = await statfs(backupRoot);
    return {
      backup_root: backupRoot,
      free_bytes: fs.bavail * fs.bsize,
      total_bytes: fs.blocks * fs.bsize,
      writable,
    };
  } catch {
    return { backup_root: backupRoot, free_bytes: null, total_bytes: null, writable: false };
  }
}

/** Proves a folder takes writes by creating and removing a probe file. */
export async function probeWritable(dir: string): Promise<string | null> {
  const probe = join(dir, `.probe-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, 'ok');
    await rm(probe);
    return null;
  } catch (error) {
    return `${dir} is not writable: ${(error as Error).message}`;
  }
}

export async function ensureFolders(...dirs: string[]): Promise<void> {
  for (const dir of dirs) await mkdir(dir, { recursive: true });
}
