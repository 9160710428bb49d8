import { randomBytes } from 'node:crypto';
import { copyFile, link, open, readdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isNamespaceComponent } from '../../shared/namespace.ts';

/** Files half-copied into a job folder (a commit across filesystems); `prepare` removes leftovers. */
export const TEMP_PREFIX = '.incoming-';

export async function fsyncPath(path: string, flags = 'r'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Proves a folder takes writes by creating and removing a probe file; null when it does. */
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

/** For `.catch`: a path that is gone (ENOENT) gives `fallback`; any other error is thrown again. */
export function unlessGone<T>(fallback: T) {
  return (error: NodeJS.ErrnoException): T => {
    if (error.code === 'ENOENT') return fallback;
    throw error;
  };
}

/** Sub-folders whose names are namespace components (anything else is not ours). */
export async function subdirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && isNamespaceComponent(e.name)).map((e) => e.name);
  } catch {
    return [];
  }
}

/** Whether `a` and `b` are one file (a link made before): false when either is missing. */
async function sameFile(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([stat(a).catch(() => null), stat(b).catch(() => null)]);
  return x !== null && y !== null && x.dev === y.dev && x.ino === y.ino;
}

/** Links `source` into `dir` as `name`; a name that is taken fails with EEXIST (nothing is overwritten). */
async function linkNoClobber(source: string, dir: string, name: string): Promise<void> {
  try {
    await link(source, join(dir, name));
  } catch (error) {
    // A complete that stopped after its link and before removing the source: done already.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await sameFile(source, join(dir, name))))
      return;
    throw error;
  }
}

/**
 * Moves a complete file into `dir` as `name`: synced, linked into place (a taken name fails
 * with EEXIST instead of being overwritten), folder synced, source removed. Across filesystems
 * (EXDEV) it is copied next to the target first.
 */
export async function placeFile(source: string, dir: string, name: string): Promise<void> {
  await fsyncPath(source, 'r+');
  try {
    await linkNoClobber(source, dir, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    const copy = join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${name}`);
    try {
      await copyFile(source, copy);
      await fsyncPath(copy, 'r+');
      await linkNoClobber(copy, dir, name);
    } finally {
      await unlink(copy).catch(() => {});
    }
  }
  await fsyncPath(dir);
  await rm(source, { force: true });
}
