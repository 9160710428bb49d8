import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  createWriteStream,
  linkSync,
  lstatSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdir, utimes } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress } from 'node:zlib';
import { createAgeDecrypt } from '../archive/age.ts';
import { byteCounter } from '../archive/byte-counter.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { readTar, type TarEntry } from './tar-reader.ts';

/** Files up to this size are written in one call; bigger ones stream. */
const SMALL_FILE = 1024 * 1024;

/** An archive entry that would write outside the job folder, or that restore refuses. */
export class UnsafeEntryError extends Error {
  override name = 'UnsafeEntryError';
}

export interface RestorePlan {
  add: string[];
  replace: string[];
  bytes: number;
}

export interface RestoreOptions {
  /** The encrypted snapshot (age → zstd → tar). */
  source: Readable;
  keys: ScoutKey[];
  /** The job folder restored into; nothing is written outside it. */
  dest: string;
  /** List what would be added and replaced, write nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  onProgress?: (bytesRestored: number) => void;
  /** Called with the encrypted bytes read so far (a download's progress). */
  onSourceBytes?: (bytesRead: number) => void;
}

/** The entry's path made safe: relative, normalised, no `..`, no NUL. */
export function safeRelative(path: string): string {
  if (path.includes('\0')) throw new UnsafeEntryError(`unsafe entry "${path}": NUL in path`);
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed.startsWith('/') || /^[A-Za-z]:/.test(trimmed)) {
    throw new UnsafeEntryError(`unsafe entry "${path}": absolute path`);
  }
  const parts = trimmed.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new UnsafeEntryError(`unsafe entry "${path}": ".." in path`);
  return parts.join('/');
}

/**
 * What is at `path`. Metadata calls in the restorer are synchronous on purpose: each is a
 * microsecond syscall, while its async form costs a thread-pool round trip — with thousands
 * of small files that latency, not the bytes, was most of a restore's time.
 */
function kindAt(path: string): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
  const s = lstatSync(path, { throwIfNoEntry: false });
  if (!s) return 'missing';
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isDirectory()) return 'dir';
  if (s.isFile()) return 'file';
  return 'other';
}

/** Refuses a path whose parent folders (inside dest) are symlinks: writing through one could land outside. */
async function checkParents(dest: string, rel: string, known: Set<string>): Promise<void> {
  const parts = rel.split('/').slice(0, -1);
  let at = dest;
  for (const part of parts) {
    at = join(at, part);
    // A folder this restore already saw as a real folder stays one: the restore never turns
    // a folder into a link (a link entry over a folder is refused).
    if (known.has(at)) continue;
    const kind = kindAt(at);
    if (kind === 'symlink')
      throw new UnsafeEntryError(`unsafe entry "${rel}": passes through the symlink ${part}`);
    if (kind === 'file' || kind === 'other')
      throw new UnsafeEntryError(`cannot restore "${rel}": ${part} is not a folder`);
    if (kind === 'dir') known.add(at);
  }
}

const tempName = (path: string) =>
  join(dirname(path), `.${posix.basename(path)}.backupd-${randomBytes(4).toString('hex')}`);

/**
 * Restores a snapshot into `dest`: files with matching paths are replaced, files absent from
 * the snapshot stay. Each file is written to a temporary name and renamed into place, so an
 * interrupted restore leaves every file either old or new. Absolute paths, `..`, devices and
 * paths through symlinks are refused before anything is written for them.
 */
export async function restoreArchive(options: RestoreOptions): Promise<RestorePlan> {
  const { dest } = options;
  const plan: RestorePlan = { add: [], replace: [], bytes: 0 };
  const folders: { path: string; mode: number; mtimeMs: number }[] = [];
  const plannedFiles = new Set<string>();
  const knownFolders = new Set<string>();
  const plannedLinks = new Set<string>();
  if (!options.dryRun) await mkdir(dest, { recursive: true });
  const tarStream = new PassThrough({ highWaterMark: 1024 * 1024 });
  // Errors of the decrypting stages reach the tar reader through tarStream.
  const counter = byteCounter((bytes) => options.onSourceBytes?.(bytes));
  const plumbing = pipeline(
    options.source,
    counter,
    createAgeDecrypt(options.keys),
    createZstdDecompress({ chunkSize: 1024 * 1024 }),
    tarStream,
  ).catch((error: unknown) => {
    tarStream.destroy(error as Error);
    return error;
  });
  try {
    await extract(tarStream);
  } catch (error) {
    options.source.destroy();
    await plumbing;
    throw error;
  }
  const failure = await plumbing;
  if (failure) throw failure;
  // Folder times last: restoring their contents changed them.
  for (const folder of folders.reverse()) {
    await chmod(folder.path, folder.mode & 0o7777).catch(() => {});
    await utimes(folder.path, folder.mtimeMs / 1000, folder.mtimeMs / 1000).catch(() => {});
  }
  return plan;

  async function extract(input: Readable): Promise<void> {
    await readTar(input, async (entry: TarEntry, data) => {
      options.signal?.throwIfAborted();
      const rel = safeRelative(entry.path);
      if (rel === '') return;
      const target = join(dest, rel);
      if (!['0', '1', '2', '5'].includes(entry.type)) {
        throw new UnsafeEntryError(
          `unsafe entry "${entry.path}": devices, FIFOs and other special files are refused`,
        );
      }
      await checkParents(dest, rel, knownFolders);
      // A dry run writes nothing, so it remembers what the restore would create to refuse the same entries.
      const parentLink = rel
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/'))
        .find((prefix) => plannedLinks.has(prefix));
      if (parentLink)
        throw new UnsafeEntryError(`unsafe entry "${rel}": passes through the symlink ${parentLink}`);
      const existing = kindAt(target);
      if (entry.type === '5') {
        if (existing === 'symlink' || existing === 'file') {
          throw new UnsafeEntryError(`cannot restore folder "${rel}": a ${existing} is in the way`);
        }
        if (!options.dryRun) {
          mkdirSync(target, { recursive: true });
          folders.push({ path: target, mode: entry.mode, mtimeMs: entry.mtimeMs });
        }
        return;
      }
      if (existing === 'dir') throw new UnsafeEntryError(`cannot restore "${rel}": a folder is in the way`);
      if (entry.type === '1') {
        const linked = safeRelative(entry.linkname);
        await checkParents(dest, linked, knownFolders);
        if (!plannedFiles.has(linked) && (options.dryRun || kindAt(join(dest, linked)) !== 'file')) {
          throw new UnsafeEntryError(
            `unsafe entry "${rel}": hard link to "${entry.linkname}", which is not a restored file`,
          );
        }
      }
      if (entry.type === '0' || entry.type === '1') {
        (existing === 'missing' ? plan.add : plan.replace).push(rel);
        plan.bytes += entry.type === '0' ? entry.size : 0;
        plannedFiles.add(rel);
      }
      if (entry.type === '2') plannedLinks.add(rel);
      if (options.dryRun) return;
      mkdirSync(dirname(target), { recursive: true });
      const temp = tempName(target);
      try {
        if (entry.type === '0') {
          if (entry.size <= SMALL_FILE) {
            const chunks: Buffer[] = [];
            for await (const chunk of data) chunks.push(chunk);
            writeFileSync(temp, Buffer.concat(chunks), { mode: 0o600 });
          } else {
            await pipeline(data, createWriteStream(temp, { mode: 0o600 }));
          }
          chmodSync(temp, entry.mode & 0o7777);
          utimesSync(temp, entry.mtimeMs / 1000, entry.mtimeMs / 1000);
          options.onProgress?.(plan.bytes);
        } else if (entry.type === '2') {
          symlinkSync(entry.linkname, temp);
        } else {
          linkSync(join(dest, safeRelative(entry.linkname)), temp);
        }
        renameSync(temp, target);
      } catch (error) {
        rmSync(temp, { force: true });
        throw error;
      }
    });
  }
}
