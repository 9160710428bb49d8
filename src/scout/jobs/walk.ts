// Walks a job folder in archive order, applies its exclusions and fingerprints the result.
// Nothing that happens to a single file (vanished, unreadable, odd type) stops a walk; what
// is left out for a reason the operator should know is reported through `onSkip`.
//
// Names are bytes: folders are read as byte strings (src/scout/jobs/byte-order.ts) and every
// system call gets the path's exact bytes, so a name that is not UTF-8 is walked like any other.
import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { access, lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { wrapError } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import { escapeName } from '../../shared/byte-names.ts';
import { type ByteString, byteString, bytesOf, sortByteStrings, utf8ByteString } from './byte-order.ts';
import { createExcluder } from './exclude.ts';
import type { JobConfig } from './marker.ts';
import { createPacer } from './pace.ts';

const log = logger.child({ mod: 'scout/jobs' });

/** How many lstat calls run together. */
const STAT_BATCH = 64;

export interface WalkEntry {
  /** Relative to the job folder, '/'-separated: the exact bytes of the path. */
  path: Buffer;
  type: 'file' | 'dir' | 'symlink';
  /** Bytes for files; 0 for folders and symlinks. */
  size: number;
  /** Permission bits (`mode & 0o7777`). */
  mode: number;
  mtimeMs: number;
  /** A symlink's target, its exact bytes. */
  linkTarget?: Buffer;
  /** What the walk saw (lstat, or stat of a followed link): the archive checks the file it opens against them. */
  dev?: number;
  ino?: number;
  nlink?: number;
  uid?: number;
  gid?: number;
}

/** An entry left out of the snapshot, and why (in words). */
export interface SkippedEntry {
  path: Buffer;
  reason: string;
}

export interface WalkOptions {
  signal?: AbortSignal;
  /** An entry left out: unreadable, a FIFO, socket or device, a folder that cannot be listed. */
  onSkip?: (skipped: SkippedEntry) => void;
}

interface Child {
  name: ByteString;
  stats: Stats | null;
  /** Why lstat failed, when it did for another reason than the entry vanishing. */
  code?: string;
}

interface Frame {
  abs: ByteString;
  rel: ByteString;
  names: ByteString[];
  nextName: number;
  ready: Child[];
  nextReady: number;
  /** realpaths of this folder and its ancestors, kept only when following symlinks. */
  chain: Set<ByteString> | null;
}

const ignoreMissing = () => null;
const BYTES = { encoding: 'latin1' } as const;
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'EIO';

async function statBatch(dir: ByteString, names: ByteString[]): Promise<Child[]> {
  return Promise.all(
    names.map(async (name): Promise<Child> => {
      try {
        return { name, stats: await lstat(bytesOf(`${dir}/${name}`)) };
      } catch (error) {
        const code = codeOf(error);
        return code === 'ENOENT' ? { name, stats: null } : { name, stats: null, code };
      }
    }),
  );
}

/** Sorted names of a folder; null when it vanished; an error code when it cannot be read. */
async function listFolder(abs: ByteString): Promise<ByteString[] | string | null> {
  try {
    return sortByteStrings(await readdir(bytesOf(abs), BYTES));
  } catch (error) {
    const code = codeOf(error);
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : code;
  }
}

function entryOf(path: ByteString, type: WalkEntry['type'], stats: Stats): WalkEntry {
  return {
    path: bytesOf(path),
    type,
    size: type === 'file' ? stats.size : 0,
    mode: stats.mode & 0o7777,
    mtimeMs: stats.mtimeMs,
    dev: stats.dev,
    ino: stats.ino,
    nlink: stats.nlink,
    uid: stats.uid,
    gid: stats.gid,
  };
}

/** Who this process is, for telling from a file's mode whether it may read it (no system call). */
function reader() {
  const uid = process.geteuid?.() ?? 0;
  const groups = new Set([process.getegid?.() ?? 0, ...(process.getgroups?.() ?? [])]);
  return {
    /** False only when the mode bits refuse; ACLs and capabilities are then asked with access(2). */
    mayRead(stats: Stats): boolean {
      if (uid === 0) return true;
      const bit = stats.uid === uid ? 0o400 : groups.has(stats.gid) ? 0o040 : 0o004;
      return (stats.mode & bit) !== 0;
    },
  };
}

const SPECIAL: Array<[keyof Stats, string]> = [
  ['isFIFO', 'a FIFO'],
  ['isSocket', 'a socket'],
  ['isCharacterDevice', 'a character device'],
  ['isBlockDevice', 'a block device'],
];

const specialKind = (stats: Stats) =>
  SPECIAL.find(([test]) => (stats[test] as () => boolean).call(stats))?.[1] ?? 'of an unknown type';

/**
 * Every folder (empty ones too, not the job root), file and symlink under `jobDir`, parents
 * before children and names in byte order, with the job's exclusions applied. Files this
 * process may not read, FIFOs, sockets, devices and folders that cannot be listed are left
 * out (a folder that cannot be listed is kept, empty) and reported through `onSkip`.
 */
export async function* walkJob(
  jobDir: string,
  config: JobConfig,
  options: WalkOptions = {},
): AsyncGenerator<WalkEntry> {
  const { signal } = options;
  const excluder = createExcluder(config.exclude, config.include_hidden);
  const follow = config.follow_symlinks;
  const pacer = createPacer(signal);
  const who = reader();
  const skip = (rel: ByteString, reason: string) => {
    const path = bytesOf(rel);
    log.warn({ path: escapeName(path), reason }, 'left out of the snapshot');
    options.onSkip?.({ path, reason });
  };
  const root = utf8ByteString(jobDir.replace(/\/+$/, '') || '/');
  let rootNames: ByteString[];
  try {
    rootNames = sortByteStrings(await readdir(bytesOf(root), BYTES));
  } catch (error) {
    throw wrapError(`unable to read job folder ${jobDir}`, error);
  }
  const rootChain = follow ? new Set([await realpath(bytesOf(root), BYTES)]) : null;
  const stack: Frame[] = [
    { abs: root, rel: '', names: rootNames, nextName: 0, ready: [], nextReady: 0, chain: rootChain },
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
    const { name, stats: own, code } = frame.ready[frame.nextReady++] as Child;
    const abs = frame.abs === '/' ? `/${name}` : `${frame.abs}/${name}`;
    const rel = frame.rel === '' ? name : `${frame.rel}/${name}`;
    if (!own) {
      // Vanished since the listing: nothing to report. Any other failure is.
      if (code && !excluder.excludesBytes(rel, false)) skip(rel, `cannot be examined (${code})`);
      continue;
    }
    let stats = own;

    if (own.isSymbolicLink()) {
      if (!follow) {
        if (excluder.excludesBytes(rel, false)) continue;
        const target = await readlink(bytesOf(abs), { encoding: 'buffer' }).catch(ignoreMissing);
        if (target === null) continue;
        yield { ...entryOf(rel, 'symlink', own), linkTarget: target };
        continue;
      }
      const followed = await stat(bytesOf(abs)).catch(ignoreMissing);
      if (!followed) {
        log.debug({ path: escapeName(bytesOf(rel)) }, 'skipping dangling symlink');
        continue;
      }
      stats = followed;
    }

    if (stats.isDirectory()) {
      if (excluder.excludesBytes(rel, true)) continue;
      let chain: Set<ByteString> | null = null;
      if (frame.chain) {
        const real = await realpath(bytesOf(abs), BYTES).catch(ignoreMissing);
        if (real === null) continue;
        if (frame.chain.has(real)) {
          log.warn({ path: escapeName(bytesOf(rel)) }, 'skipping symlink that loops back to a parent folder');
          continue;
        }
        chain = new Set(frame.chain).add(real);
      }
      const listed = await listFolder(abs);
      if (listed === null) continue;
      yield entryOf(rel, 'dir', stats);
      if (typeof listed === 'string') {
        skip(rel, `folder cannot be read (${listed}); kept empty`);
        continue;
      }
      stack.push({ abs, rel, names: listed, nextName: 0, ready: [], nextReady: 0, chain });
    } else if (stats.isFile()) {
      if (excluder.excludesBytes(rel, false)) continue;
      if (!who.mayRead(stats)) {
        const refused = await access(bytesOf(abs), constants.R_OK).then(ignoreMissing, codeOf);
        if (refused) {
          if (refused !== 'ENOENT') skip(rel, `cannot be read (${refused})`);
          continue;
        }
      }
      yield entryOf(rel, 'file', stats);
    } else if (!excluder.excludesBytes(rel, false)) {
      // Sockets, FIFOs and devices are not data we can archive.
      skip(rel, `${specialKind(stats)}, not archived`);
    }
  }
}

/** What the fingerprint reads of an entry: its path as bytes (or as text, taken as UTF-8), type and size. */
export type FingerprintEntry = Pick<WalkEntry, 'type' | 'size'> &
  Partial<Pick<WalkEntry, 'mtimeMs'>> & { path: Uint8Array | string };

/**
 * Lowercase hex SHA-256 over the job's files (symlinks count as files of size 0) and empty
 * folders, sorted by the bytes of their paths. Each one adds, in that order:
 *   file or symlink:  "f " <path bytes> NUL <size in decimal> LF
 *   empty folder:     "d " <path bytes> NUL LF
 * Paths never hold NUL, so the encoding is unambiguous. A folder is empty when no other
 * entry lies under it (after exclusions). For UTF-8 paths this is the fingerprint earlier
 * versions computed over text, so stored fingerprints stay valid.
 * With `mtimes` (a job's `change_detection: mtimes`) a file's record also carries its
 * modification time, NUL <mtimeMs> before the LF: for change detection only, never the
 * fingerprint sent with a snapshot (a drill recomputes that one from the archive).
 */
export function jobFingerprint(entries: FingerprintEntry[], options: { mtimes?: boolean } = {}): string {
  const paths = entries.map((entry) =>
    typeof entry.path === 'string' ? utf8ByteString(entry.path) : byteString(entry.path),
  );
  const nonEmpty = new Set<ByteString>();
  for (const path of paths) {
    const slash = path.lastIndexOf('/');
    if (slash > 0) nonEmpty.add(path.slice(0, slash));
  }
  const records: Array<{ path: ByteString; text: ByteString }> = [];
  entries.forEach((entry, i) => {
    const path = paths[i] as ByteString;
    if (entry.type === 'dir') {
      if (!nonEmpty.has(path)) records.push({ path, text: `d ${path}\0\n` });
    } else {
      const size = entry.type === 'file' ? entry.size : 0;
      const mtime = options.mtimes && entry.type === 'file' ? `\0${entry.mtimeMs ?? 0}` : '';
      records.push({ path, text: `f ${path}\0${size}${mtime}\n` });
    }
  });
  records.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash('sha256');
  for (const record of records) hash.update(record.text, 'latin1');
  return hash.digest('hex');
}

/** Bytes and count of every regular file under `dir`, excluded ones included; symlinks are not followed. */
export async function folderSize(
  dir: string,
  options: { signal?: AbortSignal } = {},
): Promise<{ bytes: number; files: number }> {
  const pacer = createPacer(options.signal);
  const pending = [utf8ByteString(dir)];
  let bytes = 0;
  let files = 0;
  let first = true;
  while (pending.length > 0) {
    if (pacer.due()) await pacer.rest();
    const current = pending.pop() as ByteString;
    let names: ByteString[];
    try {
      names = await readdir(bytesOf(current), BYTES);
    } catch (error) {
      if (first) throw error;
      continue;
    }
    first = false;
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      if (pacer.due()) await pacer.rest();
      for (const { name, stats } of await statBatch(current, names.slice(i, i + STAT_BATCH))) {
        if (stats?.isDirectory()) pending.push(`${current}/${name}`);
        else if (stats?.isFile()) {
          bytes += stats.size;
          files += 1;
        }
      }
    }
  }
  return { bytes, files };
}
