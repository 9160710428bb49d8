import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  type Stats,
  symlinkSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { logger } from '../../core/log.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { byteString, fsPath, shown } from './byte-paths.ts';
import { setLinkMetadata, setMetadata } from './entry-metadata.ts';
import { isEntryProblem, LISTED_PROBLEMS, type RestoreProblem, reasonOf } from './entry-problems.ts';
import {
  assertDestination,
  type OpenFolder,
  RefusedEntryError,
  SafeTree,
  UnsafeEntryError,
} from './safe-tree.ts';
import { sameData } from './same-data.ts';
import { readSnapshotTar } from './snapshot-stream.ts';
import { SparseWriter } from './sparse-writer.ts';
import { readTar, type TarEntry } from './tar-reader.ts';
import { createXattrApplier, restorableXattrs } from './xattr-applier.ts';

export type { RestoreProblem } from './entry-problems.ts';
export { RefusedEntryError, UnsafeEntryError } from './safe-tree.ts';

const log = logger.child({ mod: 'scout/restore' });

/** Files over this size took a while: their folder is checked again before the rename. */
const SMALL_FILE = 1024 * 1024;

export interface RestorePlan {
  /** Files added and replaced (a dry run: that would be), shown as src/shared/byte-names.ts escapes names. */
  add: string[];
  replace: string[];
  /** Files already there with the same content, mode, time (and owner as root): not rewritten. */
  unchanged: string[];
  bytes: number;
  /**
   * Entries restored without part of their metadata (owner, mode, time, xattrs) or not at all
   * (a name the file system refuses, a permission, a device): the first LISTED_PROBLEMS.
   */
  problems: RestoreProblem[];
  /** All problems, listed or not. */
  problemCount: number;
}

export interface RestoreOptions {
  /** The encrypted snapshot (age → zstd → tar). */
  source: Readable;
  keys: ScoutKey[];
  /** The job folder restored into; nothing is written outside it. It must not be a symlink. */
  dest: string;
  /** A folder `dest` lies in (the scan root): no folder between them may be a symlink either. */
  within?: string;
  /**
   * Restore only these entries and what lies below them (byte strings as safeRelative gives
   * them); the whole snapshot when absent. A chosen path the snapshot lacks is a problem.
   */
  paths?: string[];
  /** List what would be added and replaced, write nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Called after each file is in place, with the file bytes restored so far. */
  onProgress?: (bytesRestored: number) => void;
  /**
   * Restore progress in its one unit: the archive (encrypted) bytes read so far, out of the
   * snapshot's size — what a download reports, and what an ETA is computed from.
   */
  onSourceBytes?: (bytesRead: number) => void;
  /**
   * Restore owners (uid/gid), setuid/setgid bits and security.*, trusted.* and ACL xattrs, as
   * `tar` does for root. Defaults to whether this process runs as root; without it files lose
   * their setuid/setgid bits.
   */
  asRoot?: boolean;
  /** An entry was restored in part or not at all; the restore goes on. */
  onProblem?: (problem: RestoreProblem) => void;
}

/** The entry's path (a byte string) made safe: relative, normalised, no `..`, no NUL. */
export function safeRelative(path: string): string {
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
function kindAt(path: string | Buffer): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
  return kindOf(lstatSync(path, { throwIfNoEntry: false }));
}

function kindOf(s: Stats | undefined): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
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
function checkParents(dest: string, rel: string, known: Set<string>): void {
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
function tempNames(): () => string {
  let next = randomBytes(4).readUInt32BE(0);
  return () => {
    next = (next + 1) >>> 0;
    return `.backupd-${next.toString(16).padStart(8, '0')}`;
  };
}

/** The topmost folder of `dest` (itself or an ancestor) that does not exist yet; null when it does. */
function firstMissing(dest: string): string | null {
  let missing: string | null = null;
  for (let path = resolve(dest); !lstatSync(path, { throwIfNoEntry: false }); path = dirname(path)) {
    missing = path;
    if (dirname(path) === path) break;
  }
  return missing;
}

/** Removes `dest` and its parents up to `top` while they are empty (a restore that stopped). */
function removeEmpty(dest: string, top: string): void {
  for (let path = resolve(dest); ; path = dirname(path)) {
    try {
      rmdirSync(path);
    } catch {
      return;
    }
    if (path === top || dirname(path) === path) return;
  }
}

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** `rel` as its parent folder and its name. */
function split(rel: string): [string, string] {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? ['', rel] : [rel.slice(0, slash), rel.slice(slash + 1)];
}

/**
 * Restores a snapshot into `dest`: files with matching paths are replaced, files absent from
 * the snapshot stay. Each file is written to a temporary name and renamed into place, so an
 * interrupted restore leaves every file either old or new. Absolute paths, `..` and paths
 * through symlinks stop the restore before anything is written for them; an entry that only
 * cannot be restored (a device, a name the file system refuses, a permission) is a problem of
 * that entry, listed in the result, and the restore goes on.
 *
 * Nothing is written by path: folders are opened from `dest` down without following links
 * (SafeTree), files are created with O_EXCL|O_NOFOLLOW inside the open folder, and owners,
 * modes and times are set on the open descriptors. Before each entry its folder's path is
 * checked to still lead to the open folder, so a folder renamed or swapped for a symlink
 * mid-restore stops the restore instead of redirecting it. `dest` itself must not be a link.
 * Names are bytes (byte strings inside, src/scout/restore/byte-paths.ts); zero blocks become
 * holes (SparseWriter); hard links only ever point at files this restore wrote.
 */
export async function restoreArchive(options: RestoreOptions): Promise<RestorePlan> {
  const { dest } = options;
  const asRoot = options.asRoot ?? process.getuid?.() === 0;
  const plan: RestorePlan = { add: [], replace: [], unchanged: [], bytes: 0, problems: [], problemCount: 0 };
  const chosen = options.paths ? new Set(options.paths) : null;
  const matched = new Set<string>();
  const folders: { rel: string; entry: TarEntry; dev: number; ino: number }[] = [];
  /** Files a dry run would write / a restore wrote: the only targets a hard link may have. */
  const ownFiles = new Set<string>();
  const knownFolders = new Set<string>();
  const plannedLinks = new Set<string>();
  const tempName = tempNames();
  const problemShown = (path: string, message: string) => {
    log.warn({ path }, message);
    plan.problemCount += 1;
    const problem = { path, message };
    if (plan.problems.length < LISTED_PROBLEMS) plan.problems.push(problem);
    options.onProblem?.(problem);
  };
  const problem = (rel: string, message: string) => problemShown(shown(rel), message);
  const xattrs = createXattrApplier(problemShown);
  assertDestination(dest, options.within);
  const madeFrom = options.dryRun ? null : firstMissing(dest);
  let tree: SafeTree | null = null;
  try {
    tree = options.dryRun ? null : SafeTree.open(dest, options.within);
    await restoreAll();
  } catch (error) {
    // A restore that stopped leaves no empty folder of its own making behind (a wrong key).
    if (madeFrom) removeEmpty(dest, madeFrom);
    throw error;
  }
  return plan;

  async function restoreAll(): Promise<void> {
    try {
      await readSnapshotTar(options, extract);
      for (const path of chosen ?? []) if (!matched.has(path)) problem(path, 'not in the snapshot');
      // Folder owners, modes and times last: restoring their contents changed the times, and a
      // folder restored read-only must still take its files.
      if (tree) for (const folder of folders.reverse()) finishFolder(tree, folder);
      xattrs.flush();
    } finally {
      xattrs.discard();
      tree?.close();
    }
  }

  /** Whether the entry `rel` is one the restore was asked for. */
  function isChosen(rel: string): boolean {
    if (!chosen) return true;
    for (let end = rel.indexOf('/'); ; end = rel.indexOf('/', end + 1)) {
      const prefix = end < 0 ? rel : rel.slice(0, end);
      if (chosen.has(prefix)) {
        matched.add(prefix);
        return true;
      }
      if (end < 0) return false;
    }
  }

  /** Whether an existing file's size, mode, time (and owner, as root) are the entry's, with no xattrs to restore. */
  function sameMetadata(s: Stats, entry: TarEntry): boolean {
    if (restorableXattrs(entry.xattrs, asRoot).length > 0) return false;
    let mode = entry.mode & 0o7777;
    if (!asRoot) mode &= ~0o6000;
    return (
      s.size === entry.size &&
      (s.mode & 0o7777) === mode &&
      Math.floor(s.mtimeMs / 1000) === Math.floor(entry.mtimeMs / 1000) &&
      (!asRoot || (s.uid === entry.uid && s.gid === entry.gid))
    );
  }

  function finishFolder(safe: SafeTree, folder: (typeof folders)[number]): void {
    try {
      const open = safe.folder(folder.rel, false, folder.rel);
      if (open.dev !== folder.dev || open.ino !== folder.ino || !safe.inPlace(open)) {
        problem(
          folder.rel,
          'the folder was moved or replaced (perhaps by a symlink) while restoring; its owner, mode and time are left as they are',
        );
        return;
      }
      const wanted = restorableXattrs(folder.entry.xattrs, asRoot);
      const mode = setMetadata(
        open.fd,
        folder.entry,
        'dir',
        asRoot,
        (message) => problem(folder.rel, message),
        wanted.length > 0,
      );
      if (wanted.length > 0)
        xattrs.add(openSync(safe.at(open, '.'), FOLDER), shown(folder.rel), wanted, mode);
    } catch (error) {
      problem(folder.rel, `cannot set the folder's owner, mode and time: ${reasonOf(error)}`);
    }
  }

  /** The open folder of a hard link's target, which must be a file this restore wrote. */
  function linkSource(safe: SafeTree | null, rel: string, linked: string): OpenFolder | null {
    const refuse = () =>
      new RefusedEntryError(`hard link to "${shown(linked)}", which is not a file this restore wrote`);
    if (!ownFiles.has(linked)) throw refuse();
    if (!safe) return null;
    const folder = safe.openDetached(split(linked)[0], rel);
    if (kindAt(safe.at(folder, split(linked)[1])) !== 'file') {
      closeSync(folder.fd);
      throw refuse();
    }
    return folder;
  }

  async function extract(input: Readable): Promise<void> {
    await readTar(input, async (entry: TarEntry, data) => {
      options.signal?.throwIfAborted();
      const rel = safeRelative(byteString(entry.path));
      if (rel === '' || !isChosen(rel)) return;
      try {
        await restoreEntry(entry, rel, data);
      } catch (error) {
        if (!isEntryProblem(error)) throw error;
        problem(rel, `not restored: ${reasonOf(error)}`);
      }
    });
  }

  async function restoreEntry(entry: TarEntry, rel: string, data: AsyncGenerator<Buffer>): Promise<void> {
    if (!['0', '1', '2', '5'].includes(entry.type)) {
      throw new RefusedEntryError(
        `devices, FIFOs and other special files are not restored (tar type ${JSON.stringify(entry.type)})`,
      );
    }
    const [parentRel, name] = split(rel);
    let parent: OpenFolder | null = null;
    if (tree) {
      parent = tree.folder(parentRel, true, rel);
      tree.verify(parent);
    } else {
      checkParents(dest, rel, knownFolders);
    }
    // A dry run writes nothing, so it remembers what the restore would create to refuse the same entries.
    const parentLink = rel
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/'))
      .find((prefix) => plannedLinks.has(prefix));
    if (parentLink)
      throw new UnsafeEntryError(
        `unsafe entry "${shown(rel)}": passes through the symlink ${shown(parentLink)}`,
      );
    const targetPath = tree && parent ? tree.at(parent, name) : fsPath(dest, rel);
    const existingStats = lstatSync(targetPath, { throwIfNoEntry: false });
    const existing = kindOf(existingStats);
    if (entry.type === '5') {
      if (existing === 'symlink' || existing === 'file' || existing === 'other') {
        throw new RefusedEntryError(
          `a ${existing === 'other' ? 'special file' : existing} is in the way of the folder`,
        );
      }
      if (tree) {
        // Made private; its own mode comes once its contents are in (finishFolder).
        if (existing === 'missing') mkdirSync(targetPath, 0o700);
        const made = lstatSync(targetPath);
        if (!made.isDirectory()) throw new RefusedEntryError('something else is in the way of the folder');
        folders.push({ rel, entry, dev: made.dev, ino: made.ino });
      }
      return;
    }
    if (existing === 'dir') throw new RefusedEntryError('a folder is in the way');
    let toWrite = data;
    if (entry.type === '0' && existingStats && existing === 'file' && sameMetadata(existingStats, entry)) {
      // Same size, mode and time: the content decides, compared as the entry streams. A file
      // with extended attributes to restore is always rewritten (they are not compared).
      const differing = await compareWith(targetPath, data);
      if (differing === null) {
        plan.unchanged.push(shown(rel));
        ownFiles.add(rel);
        return;
      }
      toWrite = differing.data;
      try {
        await restoreFile(entry, rel, parent, name, toWrite, existing);
      } finally {
        if (differing.fd >= 0) closeSync(differing.fd);
      }
      return;
    }
    await restoreFile(entry, rel, parent, name, toWrite, existing);
  }

  /** The existing file's data compared with the entry's: null when the same. */
  async function compareWith(
    path: string | Buffer,
    data: AsyncGenerator<Buffer>,
  ): Promise<{ fd: number; data: AsyncGenerator<Buffer> } | null> {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return { fd: -1, data };
    }
    let rest: AsyncGenerator<Buffer> | null = null;
    try {
      rest = await sameData(fd, data);
    } finally {
      if (rest === null) closeSync(fd);
    }
    return rest === null ? null : { fd, data: rest };
  }

  async function restoreFile(
    entry: TarEntry,
    rel: string,
    parent: OpenFolder | null,
    name: string,
    data: AsyncGenerator<Buffer>,
    existing: ReturnType<typeof kindOf>,
  ): Promise<void> {
    const listed = existing === 'missing' ? plan.add : plan.replace;
    let source: OpenFolder | null = null;
    if (entry.type === '1') {
      const linked = safeRelative(byteString(entry.linkname));
      if (!tree) checkParents(dest, linked, knownFolders);
      source = linkSource(tree, rel, linked);
    }
    if (entry.type === '2') plannedLinks.add(rel);
    if (!tree || !parent) {
      if (entry.type === '0' || entry.type === '1') {
        listed.push(shown(rel));
        plan.bytes += entry.type === '0' ? entry.size : 0;
        ownFiles.add(rel);
      }
      return;
    }
    const temp = tree.at(parent, tempName());
    const entryWarn = (message: string) => problem(rel, message);
    try {
      if (entry.type === '0') {
        await writeFile(entry, rel, data, temp, tree, parent, tree.at(parent, name), entryWarn);
      } else if (entry.type === '2') {
        symlinkSync(entry.linkname, temp);
        setLinkMetadata(temp, entry, asRoot, entryWarn);
        renameSync(temp, tree.at(parent, name));
      } else if (source) {
        linkSync(tree.at(source, split(safeRelative(byteString(entry.linkname)))[1]), temp);
        renameSync(temp, tree.at(parent, name));
      }
    } catch (error) {
      try {
        rmSync(temp, { force: true });
      } catch {
        // The entry's own error says what went wrong.
      }
      throw error;
    } finally {
      if (source) closeSync(source.fd);
    }
    if (entry.type === '0' || entry.type === '1') {
      listed.push(shown(rel));
      ownFiles.add(rel);
    }
    if (entry.type === '0') {
      plan.bytes += entry.size;
      options.onProgress?.(plan.bytes);
    }
  }

  /** A file's data into `temp` (holes for zero blocks), its metadata, then the rename into place. */
  async function writeFile(
    entry: TarEntry,
    rel: string,
    data: AsyncGenerator<Buffer>,
    temp: string | Buffer,
    safe: SafeTree,
    parent: OpenFolder,
    target: string | Buffer,
    warn: (message: string) => void,
  ): Promise<void> {
    const fd = openSync(temp, NEW_FILE, 0o600);
    let handedOver = false;
    try {
      const writer = new SparseWriter(fd);
      for await (const chunk of data) {
        if (entry.size > SMALL_FILE) options.signal?.throwIfAborted();
        writer.write(chunk);
      }
      writer.finish();
      const wanted = restorableXattrs(entry.xattrs, asRoot);
      const mode = setMetadata(fd, entry, 'file', asRoot, warn, wanted.length > 0);
      // A big file took a while: check again that its folder was not swapped meanwhile.
      if (entry.size > SMALL_FILE) safe.verify(parent);
      renameSync(temp, target);
      if (wanted.length > 0) {
        xattrs.add(fd, shown(rel), wanted, mode);
        handedOver = true;
      }
    } finally {
      if (!handedOver) closeSync(fd);
    }
  }
}
