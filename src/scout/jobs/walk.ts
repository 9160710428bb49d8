// Walks a job folder in archive order, applies its exclusions and fingerprints the result.
// Nothing that happens to a single file (vanished, unreadable, odd type) stops a walk.
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { wrapError } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import { compareBytes, sortBytewise } from './byte-order.ts';
import { createExcluder } from './exclude.ts';
import type { JobConfig } from './marker.ts';
import { createPacer } from './pace.ts';

const log = logger.child({ mod: 'scout/jobs' });

/** How many lstat calls run together. */
const STAT_BATCH = 64;

export interface WalkEntry {
  /** Relative to the job folder, '/'-separated. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  /** Bytes for files; 0 for folders and symlinks. */
  size: number;
  /** Permission bits (`mode & 0o7777`). */
  mode: number;
  mtimeMs: number;
  linkTarget?: string;
}

interface Child {
  name: string;
  stats: Stats | null;
}

interface Frame {
  abs: string;
  rel: string;
  names: string[];
  nextName: number;
  ready: Child[];
  nextReady: number;
  /** realpaths of this folder and its ancestors, kept only when following symlinks. */
  chain: Set<string> | null;
}

const ignoreMissing = () => null;

async function statBatch(dir: string, names: string[]): Promise<Child[]> {
  return Promise.all(
    names.map(async (name) => ({ name, stats: await lstat(join(dir, name)).catch(ignoreMissing) })),
  );
}

/** Sorted names of a folder; null when it vanished or cannot be read. */
async function listFolder(abs: string, rel: string): Promise<string[] | null> {
  try {
    return sortBytewise(await readdir(abs));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') log.warn({ path: rel, code }, 'skipping unreadable folder');
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : [];
  }
}

function entryOf(path: string, type: WalkEntry['type'], stats: Stats): WalkEntry {
  return {
    path,
    type,
    size: type === 'file' ? stats.size : 0,
    mode: stats.mode & 0o7777,
    mtimeMs: stats.mtimeMs,
  };
}

/**
 * Every folder (empty ones too, not the job root), file and symlink under `jobDir`, parents
 * before children and names in byte order, with the job's exclusions applied.
 */
export async function* walkJob(
  jobDir: string,
  config: JobConfig,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<WalkEntry> {
  const { signal } = options;
  const excluder = createExcluder(config.exclude, config.include_hidden);
  const follow = config.follow_symlinks;
  const pacer = createPacer(signal);
  let rootNames: string[];
  try {
    rootNames = sortBytewise(await readdir(jobDir));
  } catch (error) {
    throw wrapError(`unable to read job folder ${jobDir}`, error);
  }
  const rootChain = follow ? new Set([await realpath(jobDir)]) : null;
  const stack: Frame[] = [
    { abs: jobDir, rel: '', names: rootNames, nextName: 0, ready: [], nextReady: 0, chain: rootChain },
  ];

  while (stack.length > 0) {
    if (pacer.due()) await pacer.rest();
    const frame = stack[stack.length - 1] as Frame;
    if (frame.nextReady >= frame.ready.length) {
      if (frame.nextName >= frame.names.length) {
        stack.pop();
        continue;
      }
      const batch = frame.names.slice(frame.nextName, frame.nextName + STAT_BATCH);
      frame.nextName += batch.length;
      frame.ready = await statBatch(frame.abs, batch);
      frame.nextReady = 0;
      continue;
    }
    const { name, stats: own } = frame.ready[frame.nextReady++] as Child;
    if (!own) continue; // vanished since the listing
    const abs = join(frame.abs, name);
    const rel = frame.rel === '' ? name : `${frame.rel}/${name}`;
    let stats = own;

    if (own.isSymbolicLink()) {
      if (!follow) {
        if (excluder.excluded(rel, false)) continue;
        const target = await readlink(abs).catch(ignoreMissing);
        if (target === null) continue;
        yield { ...entryOf(rel, 'symlink', own), linkTarget: target };
        continue;
      }
      const followed = await stat(abs).catch(ignoreMissing);
      if (!followed) {
        log.debug({ path: rel }, 'skipping dangling symlink');
        continue;
      }
      stats = followed;
    }

    if (stats.isDirectory()) {
      if (excluder.excluded(rel, true)) continue;
      let chain: Set<string> | null = null;
      if (frame.chain) {
        const real = await realpath(abs).catch(ignoreMissing);
        if (real === null) continue;
        if (frame.chain.has(real)) {
          log.warn({ path: rel }, 'skipping symlink that loops back to a parent folder');
          continue;
        }
        chain = new Set(frame.chain).add(real);
      }
      const names = await listFolder(abs, rel);
      if (names === null) continue;
      yield entryOf(rel, 'dir', stats);
      stack.push({ abs, rel, names, nextName: 0, ready: [], nextReady: 0, chain });
    } else if (stats.isFile()) {
      if (excluder.excluded(rel, false)) continue;
      yield entryOf(rel, 'file', stats);
    }
    // Sockets, FIFOs and devices are not data we can archive.
  }
}

/**
 * Lowercase hex SHA-256 over the job's files (symlinks count as files of size 0) and empty
 * folders, sorted by the UTF-8 bytes of their paths. Each one adds, in that order:
 *   file or symlink:  "f " <path> NUL <size in decimal> LF
 *   empty folder:     "d " <path> NUL LF
 * Paths never hold NUL, so the encoding is unambiguous. A folder is empty when no other
 * entry lies under it (after exclusions).
 */
export function jobFingerprint(entries: WalkEntry[]): string {
  const nonEmpty = new Set<string>();
  for (const entry of entries) {
    const slash = entry.path.lastIndexOf('/');
    if (slash > 0) nonEmpty.add(entry.path.slice(0, slash));
  }
  const records: Array<{ path: string; text: string }> = [];
  for (const entry of entries) {
    if (entry.type === 'dir') {
      if (!nonEmpty.has(entry.path)) records.push({ path: entry.path, text: `d ${entry.path}\0\n` });
    } else {
      const size = entry.type === 'file' ? entry.size : 0;
      records.push({ path: entry.path, text: `f ${entry.path}\0${size}\n` });
    }
  }
  records.sort((a, b) => compareBytes(a.path, b.path));
  const hash = createHash('sha256');
  for (const record of records) hash.update(record.text, 'utf8');
  return hash.digest('hex');
}

/** Bytes and count of every regular file under `dir`, excluded ones included; symlinks are not followed. */
export async function folderSize(
  dir: string,
  options: { signal?: AbortSignal } = {},
): Promise<{ bytes: number; files: number }> {
  const pacer = createPacer(options.signal);
  const pending = [dir];
  let bytes = 0;
  let files = 0;
  let first = true;
  while (pending.length > 0) {
    if (pacer.due()) await pacer.rest();
    const current = pending.pop() as string;
    let names: string[];
    try {
      names = await readdir(current);
    } catch (error) {
      if (first) throw error;
      continue;
    }
    first = false;
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      if (pacer.due()) await pacer.rest();
      for (const { name, stats } of await statBatch(current, names.slice(i, i + STAT_BATCH))) {
        if (stats?.isDirectory()) pending.push(join(current, name));
        else if (stats?.isFile()) {
          bytes += stats.size;
          files += 1;
        }
      }
    }
  }
  return { bytes, files };
}
