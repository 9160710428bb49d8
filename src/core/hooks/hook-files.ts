import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest, notFound } from '../errors.ts';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const MAX_UPLOAD_FILE_BYTES = 1024 * 1024;

/** Checks an uploaded or requested file name: letters, digits, . _ -, no path, no leading dot. */
export function checkFileName(name: string, what: string): string {
  if (!SAFE_NAME.test(name) || name.includes('..')) {
    throw badRequest(`${what} name must be 1 to 100 letters, digits, ".", "_" or "-", not starting with "."`);
  }
  return name;
}

/**
 * A folder of small files an admin uploads (hook scripts, CA certificates) under the data
 * dir, with safe names only; writes are atomic.
 */
export function createFileFolder(dir: string, what: string, mode: number) {
  return {
    dir,
    async list(): Promise<{ filename: string; size: number; modified_at: string }[]> {
      await mkdir(dir, { recursive: true });
      const names = (await readdir(dir)).filter((n) => SAFE_NAME.test(n)).sort();
      const out = [];
      for (const filename of names) {
        // Gone since readdir: a concurrent delete.
        const s = await stat(join(dir, filename)).catch(() => null);
        if (s?.isFile()) out.push({ filename, size: s.size, modified_at: s.mtime.toISOString() });
      }
      return out;
    },
    async read(name: string): Promise<string> {
      try {
        return await readFile(join(dir, checkFileName(name, what)), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`no ${what} named ${name}`);
        throw error;
      }
    },
    async write(name: string, content: Uint8Array): Promise<void> {
      checkFileName(name, what);
      if (content.length > MAX_UPLOAD_FILE_BYTES) throw badRequest(`${what} files are at most 1 MiB`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // A temp name of its own: two uploads of one name at once must not share it.
      const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        await writeFile(temp, content, { mode });
        await chmod(temp, mode);
        await rename(temp, join(dir, name));
      } finally {
        await rm(temp, { force: true });
      }
    },
    async remove(name: string): Promise<void> {
      const path = join(dir, checkFileName(name, what));
      try {
        // One step, no stat first: of two deletes at once, one finds nothing (404), never a 500.
        await rm(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`no ${what} named ${name}`);
        throw error;
      }
    },
  };
}

export type FileFolder = ReturnType<typeof createFileFolder>;
