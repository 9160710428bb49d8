// Paths of a restore: an entry's name made safe, what is at a path, the dry run's parent
// check, temporary names, and the folders a restore made for its destination.
import { randomBytes } from 'node:crypto';
import { constants, lstatSync, rmdirSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fsPath, shown } from './byte-paths.ts';
import { RefusedEntryError, UnsafeEntryError } from './safe-tree.ts';

/** The entry's path (a byte string) made safe: relative, normalised, no `..`, no NUL. */
/** A path that is already relative and normal (no empty, `.` or `..` part, no NUL or drive). */
const NORMAL = /^(?![A-Za-z]:)(?!\.{1,2}(?:\/|$))(?:[^/\0]+(?:\/(?!\.{1,2}(?:\/|$))[^/\0]+)*)?$/;

export function safeRelative(path: string): string {
  // Most names need no work (one test instead of a split, a filter and a join per entry).
  if (NORMAL.test(path)) return path;
  if (path.includes('\0')) throw new UnsafeEntryError(`unsafe entry "${shown(path)}": NUL in path`);
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed.startsWith('/') || /^[A-Za-z]:/.test(trimmed)) {
    throw new UnsafeEntryError(`unsafe entry "${shown(path)}": absolute path`);
  }
  const parts = trimmed.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new UnsafeEntryError(`unsafe entry "${shown(path)}": ".." in path`);
  return parts.join('/');
}

/**
 * What is at `path`. Metadata calls in the restorer are synchronous on purpose: each is a
 * microsecond syscall, while its async form costs a thread-pool round trip — with thousands
 * of small files that latency, not the bytes, was most of a restore's time.
 */
export function kindAt(path: string | Buffer): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
  return kindOf(lstatSync(path, { throwIfNoEntry: false }));
}

export function kindOf(s: Stats | undefined): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
  if (!s) return 'missing';
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isDirectory()) return 'dir';
  if (s.isFile()) return 'file';
  return 'other';
}

/**
 * For a dry run, which opens nothing: refuses a path whose parent folders (inside dest) are
 * symlinks. A real restore checks the same while opening them (SafeTree).
 */
export function checkParents(dest: string, rel: string, known: Set<string>): void {
  const parts = rel.split('/').slice(0, -1);
  let prefix = '';
  for (const part of parts) {
    prefix = prefix === '' ? part : `${prefix}/${part}`;
    // A folder this restore already saw as a real folder stays one: the restore never turns
    // a folder into a link (a link entry over a folder is refused).
    if (known.has(prefix)) continue;
    const kind = kindAt(fsPath(dest, prefix));
    if (kind === 'symlink')
      throw new UnsafeEntryError(`unsafe entry "${shown(rel)}": passes through the symlink ${shown(part)}`);
    if (kind === 'file' || kind === 'other') throw new RefusedEntryError(`${shown(prefix)} is not a folder`);
    if (kind === 'dir') known.add(prefix);
  }
}

/**
 * Temporary names of their own, `.backupd-<8 hex>` (17 bytes, whatever the entry's name: a
 * name of 255 bytes still restores): a random start per restore counting up (no random bytes
 * drawn per file); created with O_EXCL all the same.
 */
export function tempNames(): () => string {
  let next = randomBytes(4).readUInt32BE(0);
  return () => {
    next = (next + 1) >>> 0;
    return `.backupd-${next.toString(16).padStart(8, '0')}`;
  };
}

/** The topmost folder of `dest` (itself or an ancestor) that does not exist yet; null when it does. */
export function firstMissing(dest: string): string | null {
  let missing: string | null = null;
  for (let path = resolve(dest); !lstatSync(path, { throwIfNoEntry: false }); path = dirname(path)) {
    missing = path;
    if (dirname(path) === path) break;
  }
  return missing;
}

/** Removes `dest` and its parents up to `top` while they are empty (a restore that stopped). */
export function removeEmpty(dest: string, top: string): void {
  for (let path = resolve(dest); ; path = dirname(path)) {
    try {
      rmdirSync(path);
    } catch {
      return;
    }
    if (path === top || dirname(path) === path) return;
  }
}

export const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
export const FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** `rel` as its parent folder and its name. */
export function split(rel: string): [string, string] {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? ['', rel] : [rel.slice(0, slash), rel.slice(slash + 1)];
}
