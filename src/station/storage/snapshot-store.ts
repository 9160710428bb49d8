import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { badRequest } from '../../core/errors.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';

/** Where a snapshot lives: `instanceId` is null for the legacy layout `<scout>/<job>/<file>`. */
export interface SnapshotKey {
  scoutId: string;
  instanceId: string | null;
  jobName: string;
  filename: string;
}

export interface StoredFile extends SnapshotKey {
  sizeBytes: number;
  mtimeMs: number;
}

const FILENAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,250}\.tar\.zst$/;
const TEMP_PREFIX = '.incoming-';

export function checkComponent(field: string, value: string): void {
  if (!isNamespaceComponent(value)) throw badRequest(`${field} must be ${NAMESPACE_RULE}`);
}

export function checkFilename(filename: string): void {
  if (!FILENAME.test(filename) || filename.includes('..')) {
    throw badRequest('filename must be a snapshot file name ending in .tar.zst (letters, digits, . _ -)');
  }
}

async function fsyncPath(path: string, flags = 'r'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Snapshot bytes on the local disk under BACKUP_ROOT. Every path is built from validated
 * components, so nothing reaches outside the root. A file appears only complete: it is
 * synced, then linked into place under a name nobody holds (link fails instead of
 * overwriting), then the folder is synced.
 */
export function createSnapshotStore(root: string) {
  function dirOf(key: Omit<SnapshotKey, 'filename'>): string {
    checkComponent('scout_id', key.scoutId);
    if (key.instanceId !== null) checkComponent('scout_instance_id', key.instanceId);
    checkComponent('job_name', key.jobName);
    return key.instanceId === null
      ? join(root, key.scoutId, key.jobName)
      : join(root, key.scoutId, key.instanceId, key.jobName);
  }

  function pathOf(key: SnapshotKey): string {
    checkFilename(key.filename);
    return join(dirOf(key), key.filename);
  }

  async function linkNoClobber(source: string, dir: string, baseName: string): Promise<string> {
    const stem = baseName.replace(/\.tar\.zst$/, '');
    for (let n = 1; n < 10_000; n += 1) {
      const name = n === 1 ? baseName : `${stem}-${n}.tar.zst`;
      try {
        await link(source, join(dir, name));
        return name;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    throw new Error(`no free file name for ${baseName}`);
  }

  return {
    root,
    pathOf,
    dirOf,

    /**
     * Moves a complete staged file into place under `preferredName` (or `-2`, `-3`, … when
     * taken) and returns the name used. The staged file is gone afterwards.
     */
    async commit(
      stagedPath: string,
      at: Omit<SnapshotKey, 'filename'>,
      preferredName: string,
    ): Promise<string> {
      checkFilename(preferredName);
      const dir = dirOf(at);
      await mkdir(dir, { recursive: true });
      await fsyncPath(stagedPath, 'r+');
      let source = stagedPath;
      let name: string;
      try {
        name = await linkNoClobber(source, dir, preferredName);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        // Staging is on another filesystem: copy next to the target first, then link that.
        source = join(dir, `${TEMP_PREFIX}${preferredName}`);
        await copyFile(stagedPath, source);
        await fsyncPath(source, 'r+');
        name = await linkNoClobber(source, dir, preferredName);
        await unlink(source);
      }
      await fsyncPath(dir);
      await rm(stagedPath, { force: true });
      return name;
    },

    async stat(key: SnapshotKey): Promise<{ sizeBytes: number; mtimeMs: number } | null> {
      const path = pathOf(key);
      try {
        const s = await stat(path);
        return s.isFile() ? { sizeBytes: s.size, mtimeMs: Math.round(s.mtimeMs) } : null;
      } catch {
        return null;
      }
    },

    read(key: SnapshotKey, range?: { start: number; end: number }): Readable {
      return createReadStream(pathOf(key), range ? { start: range.start, end: range.end } : {});
    },

    async remove(key: SnapshotKey): Promise<boolean> {
      try {
        await unlink(pathOf(key));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },

    async removeInstance(scoutId: string, instanceId: string): Promise<void> {
      checkComponent('scout_id', scoutId);
      checkComponent('scout_instance_id', instanceId);
      await rm(join(root, scoutId, instanceId), { recursive: true, force: true });
    },

    /** Every snapshot file in the instance layout; leftovers of interrupted commits are removed. */
    async *list(): AsyncGenerator<StoredFile> {
      for (const scoutId of await subdirs(root)) {
        for (const instanceId of await subdirs(join(root, scoutId))) {
          for (const jobName of await subdirs(join(root, scoutId, instanceId))) {
            const dir = join(root, scoutId, instanceId, jobName);
            for (const entry of await readdir(dir, { withFileTypes: true })) {
              if (!entry.isFile()) continue;
              if (entry.name.startsWith(TEMP_PREFIX)) {
                await rm(join(dir, entry.name), { force: true });
                continue;
              }
              if (!FILENAME.test(entry.name)) continue;
              const s = await stat(join(dir, entry.name));
              yield {
                scoutId,
                instanceId,
                jobName,
                filename: entry.name,
                sizeBytes: s.size,
                mtimeMs: Math.round(s.mtimeMs),
              };
            }
          }
        }
      }
    },
  };
}

async function subdirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && isNamespaceComponent(e.name)).map((e) => e.name);
  } catch {
    return [];
  }
}

export type SnapshotStore = ReturnType<typeof createSnapshotStore>;
