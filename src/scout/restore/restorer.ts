import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  type Stats,
  symlinkSync,
} from 'node:fs';
import type { Readable } from 'node:stream';
import { logger } from '../../core/log.ts';
import { byteString, fsPath, shown } from './byte-paths.ts';
import { setLinkMetadata, setMetadata } from './entry-metadata.ts';
import {
  checkParents,
  FOLDER,
  firstMissing,
  kindOf,
  NEW_FILE,
  removeEmpty,
  safeRelative,
  split,
  tempNames,
} from './entry-paths.ts';
import { isEntryProblem, LISTED_PROBLEMS, reasonOf } from './entry-problems.ts';
import { OwnFiles } from './own-files.ts';
import type { RestoreOptions, RestorePlan } from './restore-plan.ts';
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

export { safeRelative } from './entry-paths.ts';
export type { RestoreProblem } from './entry-problems.ts';
export type { RestoreOptions, RestorePlan } from './restore-plan.ts';
export { RefusedEntryError, UnsafeEntryError } from './safe-tree.ts';

const log = logger.child({ mod: 'scout/restore' });

/** Files over this size took a while: their folder is checked again before the rename. */
const SMALL_FILE = 1024 * 1024;

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
  const plan: RestorePlan = {
    add: [],
    replace: [],
    unchanged: [],
    counts: { add: 0, replace: 0, unchanged: 0 },
    bytes: 0,
    problems: [],
    problemCount: 0,
  };
  const listFiles = options.listFiles ?? true;
  /** Counts a file in the plan (and names it there when listing). */
  const note = (kind: 'add' | 'replace' | 'unchanged', rel: string) => {
    plan.counts[kind] += 1;
    if (listFiles) plan[kind].push(shown(rel));
  };
  const chosen = options.paths ? new Set(options.paths) : null;
  const matched = new Set<string>();
  const folders: { rel: string; entry: TarEntry; dev: number; ino: number }[] = [];
  /** Files a dry run would write / a restore wrote: the only targets a hard link may have. */
  const ownFiles = new OwnFiles();
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
    if (!safe) {
      if (!ownFiles.hasPath(linked)) throw refuse();
      return null;
    }
    const folder = safe.openDetached(split(linked)[0], rel);
    const target = lstatSync(safe.at(folder, split(linked)[1]), { throwIfNoEntry: false });
    if (!target?.isFile() || !ownFiles.hasInode(target)) {
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
      // In a folder this restore made every name is new: made in place, no lstat, temp or rename.
      if (tree.isMade(parent.rel) && (await createNew(tree, entry, rel, parent, name, data))) return;
    } else {
      checkParents(dest, rel, knownFolders);
      // A dry run writes nothing, so it remembers what the restore would create to refuse the same entries.
      const parentLink = plannedLinks.size === 0 ? undefined : plannedParentLink(rel);
      if (parentLink)
        throw new UnsafeEntryError(
          `unsafe entry "${shown(rel)}": passes through the symlink ${shown(parentLink)}`,
        );
    }
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
        note('unchanged', rel);
        if (tree) ownFiles.addInode(existingStats);
        else ownFiles.addPath(rel);
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
    const listed = existing === 'missing' ? 'add' : 'replace';
    let source: OpenFolder | null = null;
    if (entry.type === '1') {
      const linked = safeRelative(byteString(entry.linkname));
      if (!tree) checkParents(dest, linked, knownFolders);
      source = linkSource(tree, rel, linked);
    }
    if (entry.type === '2') plannedLinks.add(rel);
    if (!tree || !parent) {
      if (entry.type === '0' || entry.type === '1') {
        note(listed, rel);
        plan.bytes += entry.type === '0' ? entry.size : 0;
        ownFiles.addPath(rel);
      }
      return;
    }
    const temp = tree.at(parent, tempName());
    const entryWarn = (message: string) => problem(rel, message);
    try {
      if (entry.type === '0') {
        await writeFile(entry, rel, data, temp, tree, parent, tree.at(parent, name));
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
    if (entry.type === '0' || entry.type === '1') note(listed, rel);
    if (entry.type === '0') fileDone(entry);
  }

  /** A file's bytes counted and reported. */
  function fileDone(entry: TarEntry): void {
    plan.bytes += entry.size;
    options.onProgress?.(plan.bytes);
  }

  /** Which planned symlink (a dry run's) the path `rel` would pass through, if any. */
  function plannedParentLink(rel: string): string | undefined {
    for (let end = rel.indexOf('/'); end >= 0; end = rel.indexOf('/', end + 1)) {
      if (plannedLinks.has(rel.slice(0, end))) return rel.slice(0, end);
    }
    return undefined;
  }

  /**
   * A folder, file or symlink made at its own name in a folder this restore made (O_EXCL: never
   * over or through anything). False when the name is taken after all (someone was faster): the
   * caller then goes the way of an existing folder. A file that fails half-written is removed.
   */
  async function createNew(
    safe: SafeTree,
    entry: TarEntry,
    rel: string,
    parent: OpenFolder,
    name: string,
    data: AsyncGenerator<Buffer>,
  ): Promise<boolean> {
    const target = safe.at(parent, name);
    const taken = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EEXIST';
    if (entry.type === '5') {
      try {
        mkdirSync(target, 0o700);
      } catch (error) {
        if (taken(error)) return false;
        throw error;
      }
      const made = lstatSync(target);
      safe.markMade(rel);
      folders.push({ rel, entry, dev: made.dev, ino: made.ino });
      return true;
    }
    if (entry.type === '2') {
      try {
        symlinkSync(entry.linkname, target);
      } catch (error) {
        if (taken(error)) return false;
        throw error;
      }
      setLinkMetadata(target, entry, asRoot, (message) => problem(rel, message));
      return true;
    }
    if (entry.type !== '0') return false;
    let fd: number;
    try {
      fd = openSync(target, NEW_FILE, 0o600);
    } catch (error) {
      if (taken(error)) return false;
      throw error;
    }
    let handedOver = false;
    try {
      handedOver = await fillFile(fd, entry, rel, data, safe, parent);
    } catch (error) {
      closeSync(fd);
      try {
        rmSync(target, { force: true });
      } catch {
        // The entry's own error says what went wrong.
      }
      throw error;
    }
    if (!handedOver) closeSync(fd);
    note('add', rel);
    fileDone(entry);
    return true;
  }

  /**
   * A new file's data (holes for zero blocks) and metadata, written through `fd`; remembered as
   * one of the restore's own. True when `fd` went to the xattr applier (which closes it).
   */
  async function fillFile(
    fd: number,
    entry: TarEntry,
    rel: string,
    data: AsyncGenerator<Buffer>,
    safe: SafeTree,
    parent: OpenFolder,
    /** Puts the file at its name (a rename), when it was written elsewhere. */
    putInPlace?: () => void,
  ): Promise<boolean> {
    const writer = new SparseWriter(fd);
    for await (const chunk of data) {
      if (entry.size > SMALL_FILE) options.signal?.throwIfAborted();
      writer.write(chunk);
    }
    writer.finish();
    const made = fstatSync(fd);
    ownFiles.addInode(made);
    const wanted = restorableXattrs(entry.xattrs, asRoot);
    const mode = setMetadata(
      fd,
      entry,
      'file',
      asRoot,
      (message) => problem(rel, message),
      wanted.length > 0,
      made,
    );
    // A big file took a while: check again that its folder was not swapped meanwhile.
    if (entry.size > SMALL_FILE) safe.verify(parent);
    putInPlace?.();
    if (wanted.length === 0) return false;
    xattrs.add(fd, shown(rel), wanted, mode);
    return true;
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
  ): Promise<void> {
    const fd = openSync(temp, NEW_FILE, 0o600);
    let handedOver = false;
    try {
      handedOver = await fillFile(fd, entry, rel, data, safe, parent, () => renameSync(temp, target));
    } finally {
      if (!handedOver) closeSync(fd);
    }
  }
}
