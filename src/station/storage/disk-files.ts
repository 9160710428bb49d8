import { randomBytes } from 'node:crypto';
import { copyFile, link, open, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isNamespaceComponent } from '../../shared/namespace.ts';
import { nameCandidates } from './names.ts';

/** Files half-copied into a job folder (an EXDEV commit, a put); `list` removes leftovers. */
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

/** Sub-folders whose names are namespace components (anything else is not ours). */
export async function subdirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && isNamespaceComponent(e.name)).map((e) => e.name);
  } catch {
    return [];
  }
}

/** Links `source` into `dir` under the first free name of `preferred`, `-2`, `-3`, … (never overwrites). */
async function linkNoClobber(source: string, dir: string, preferred: string): Promise<string> {
  for (const name of nameCandidates(preferred)) {
    try {
      await link(source, join(dir, name));
      return name;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`no free file name for ${preferred}`);
}

/**
 * Moves a complete file into `dir` under `preferred` (or `-2`, `-3`, … when taken) and returns
 * the name used: synced, linked into place (link fails instead of overwriting), folder synced,
 * source removed. Across filesystems (EXDEV) it is copied next to the target first.
 */
export async function placeFile(source: string, dir: string, preferred: string): Promise<string> {
  await fsyncPath(source, 'r+');
  let name: string;
  try {
    name = await linkNoClobber(source, dir, preferred);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    const copy = join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${preferred}`);
    try {
      await copyFile(source, copy);
      await fsyncPath(copy, 'r+');
      name = await linkNoClobber(copy, dir, preferred);
    } finally {
      await unlink(copy).catch(() => {});
    }
  }
  await fsyncPath(dir);
  await rm(source, { force: true });
  return name;
}
