import { closeSync, constants, linkSync, lstatSync, mkdirSync, openSync, renameSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { byteString, fsPath, shown } from './byte-paths.ts';
import { setMetadata } from './entry-metadata.ts';
import {
  checkParents,
  FOLDER,
  firstMissing,
  kindOf,
  removeEmpty,
  safeRelative,
  split,
  tempNames,
} from './entry-paths.ts';
import { DiskFullError, isDiskFull, isEntryProblem, reasonOf } from './entry-problems.ts';
import { FileBatches, type QueuedFile } from './file-batches.ts';
import {
  createNew,
  type EntryData,
  type Place,
  removeQuietly,
  writeFile,
  writeSymlink,
} from './new-files.ts';
import type { RestoreOptions, RestorePlan } from './restore-plan.ts';
import { type RestoredFolder, RestoreRun } from './restore-run.ts';
import {
  assertDestination,
  type OpenFolder,
  RefusedEntryError,
  SafeTree,
  UnsafeEntryError,
} from './safe-tree.ts';
import { sameData, sameWhole } from './same-data.ts';
import { readSnapshotTar } from './snapshot-stream.ts';
import { readTar, type TarEntry } from './tar-reader.ts';
import { restorableXattrs } from './xattr-applier.ts';

export { safeRelative } from './entry-paths.ts';

const NO_DATA = Buffer.alloc(0);

export type { RestoreProblem } from './entry-problems.ts';
export type { RestoreOptions, RestorePlan } from './restore-plan.ts';
export { RefusedEntryError, UnsafeEntryError } from './safe-tree.ts';

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
  const run = new RestoreRun(options);
  const { plan, asRoot, ownFiles, folders, xattrs } = run;
  const problem = (rel: string, message: string) => run.problem(rel, message);
  const chosen = options.paths ? new Set(options.paths) : null;
  const matched = new Set<string>();
  const knownFolders = new Set<string>();
  const plannedLinks = new Set<string>();
  const tempName = tempNames();
  assertDestination(dest, options.within);
  const madeFrom = options.dryRun ? null : firstMissing(dest);
  let tree: SafeTree | null = null;
  // A file the writing thread found its name taken for goes the way of an existing name.
  const batches = new FileBatches(run, ({ entry, at }: QueuedFile, data: Buffer) =>
    guarded(at.rel, () => {
      at.safe.verify(at.parent);
      return restoreExisting(entry, at.rel, at, data);
    }),
  );
  try {
    tree = options.dryRun ? null : SafeTree.open(dest, options.within);
    if (tree) tree.releaseFd = (fd) => batches.closeLater(fd);
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
      await batches.drain();
      for (const path of chosen ?? []) if (!matched.has(path)) problem(path, 'not in the snapshot');
      // Folder owners, modes and times last: restoring their contents changed the times, and a
      // folder restored read-only must still take its files.
      if (tree) for (const folder of folders.reverse()) finishFolder(tree, folder);
      xattrs.flush();
    } finally {
      await batches.close();
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

  function finishFolder(safe: SafeTree, folder: RestoredFolder): void {
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
    await readTar(
      input,
      (entry: TarEntry, data, whole) => {
        options.signal?.throwIfAborted();
        const rel = safeRelative(byteString(entry.path));
        if (rel === '' || !isChosen(rel)) return undefined;
        // An empty file is whole too (no data to await).
        const body = whole ?? (entry.type === '0' && entry.size === 0 ? NO_DATA : data);
        return guarded(rel, () => restoreEntry(entry, rel, body));
      },
      { freeInput: true },
    );
  }

  /**
   * Restores one entry: a problem of that entry is reported, the restore goes on. Nothing to
   * await (undefined) when the entry was dealt with at once: most small files of a big tree are
   * only queued for the writing thread, and a promise and its turn per file cost more than that.
   */
  function guarded(rel: string, restore: () => Promise<void> | undefined): Promise<void> | undefined {
    const entryProblem = (error: unknown) => {
      if (isDiskFull(error)) throw new DiskFullError(shown(rel), error);
      if (!isEntryProblem(error)) throw error;
      problem(rel, `not restored: ${reasonOf(error)}`);
    };
    try {
      return restore()?.catch(entryProblem);
    } catch (error) {
      entryProblem(error);
      return undefined;
    }
  }

  function restoreEntry(entry: TarEntry, rel: string, data: EntryData): Promise<void> | undefined {
    if (!['0', '1', '2', '5'].includes(entry.type)) {
      throw new RefusedEntryError(
        `devices, FIFOs and other special files are not restored (tar type ${JSON.stringify(entry.type)})`,
      );
    }
    // The common case without an await: a small new file in a folder this restore made, with no
    // queued file above it, goes to the writing thread as below.
    if (tree && entry.type === '0' && Buffer.isBuffer(data) && !batches.isQueuedAbove(rel)) {
      const [parentRel, name] = split(rel);
      const at = { safe: tree, parent: tree.folder(parentRel, true, rel), rel, name };
      const queued = queueNew(at, entry, data);
      if (queued !== null) return queued;
    }
    return restoreAnyEntry(entry, rel, data);
  }

  /**
   * A small new file in a folder this restore made goes to the writing thread (which checks the
   * folder as restoreAnyEntry does first): what `batches.add` answers, or null when it does not go.
   */
  function queueNew(at: Place, entry: TarEntry, data: EntryData): Promise<void> | undefined | null {
    if (entry.type !== '0' || !Buffer.isBuffer(data) || !at.safe.isMade(at.parent.rel)) return null;
    return batches.fits(entry, data) ? batches.add(at, entry, data) : null;
  }

  async function restoreAnyEntry(entry: TarEntry, rel: string, data: EntryData): Promise<void> {
    const [parentRel, name] = split(rel);
    let at: Place | null = null;
    if (tree) {
      if (batches.isQueuedAbove(rel)) await batches.drain();
      const parent = tree.folder(parentRel, true, rel);
      at = { safe: tree, parent, rel, name };
      // In a folder this restore made every name is new: made in place, no lstat, temp or rename;
      // a small file on the writing thread.
      const made = tree.isMade(parent.rel);
      const queued = queueNew(at, entry, data);
      if (queued !== null) return queued;
      // Wait for the files queued when this entry depends on them: a hard link (to one of
      // them, perhaps) or the same name again (the later entry wins, as in tar).
      if (entry.type === '1' || batches.isQueued(rel)) await batches.drain();
      tree.verify(parent);
      if (made && (await createNew(run, at, entry, data))) return;
    } else {
      checkParents(dest, rel, knownFolders);
      // A dry run writes nothing, so it remembers what the restore would create to refuse the same entries.
      const parentLink = plannedLinks.size === 0 ? undefined : plannedParentLink(rel);
      if (parentLink)
        throw new UnsafeEntryError(
          `unsafe entry "${shown(rel)}": passes through the symlink ${shown(parentLink)}`,
        );
    }
    await restoreExisting(entry, rel, at, data);
  }

  /** An entry whose name may be taken already (by the restore's own entry, or anything). */
  async function restoreExisting(
    entry: TarEntry,
    rel: string,
    at: Place | null,
    data: EntryData,
  ): Promise<void> {
    const targetPath = at ? at.safe.at(at.parent, at.name) : fsPath(dest, rel);
    const existingStats = lstatSync(targetPath, { throwIfNoEntry: false });
    const existing = kindOf(existingStats);
    if (entry.type === '5') {
      if (existing === 'symlink' || existing === 'file' || existing === 'other') {
        throw new RefusedEntryError(
          `a ${existing === 'other' ? 'special file' : existing} is in the way of the folder`,
        );
      }
      if (tree) {
        // Made private; its own mode comes once its contents are in (finishFolder). Made here,
        // it is the restore's own like any folder made in one (createNew): its names are new.
        if (existing === 'missing') {
          mkdirSync(targetPath, 0o700);
          at?.safe.markMade(rel);
        }
        const made = lstatSync(targetPath);
        if (!made.isDirectory()) throw new RefusedEntryError('something else is in the way of the folder');
        run.addFolder(rel, entry, made);
      }
      return;
    }
    if (existing === 'dir') throw new RefusedEntryError('a folder is in the way');
    if (
      entry.type === '0' &&
      existingStats &&
      existing === 'file' &&
      run.sameMetadata(existingStats, entry)
    ) {
      // Same size, mode and time: the content decides, compared as the entry streams. A file
      // with extended attributes to restore is always rewritten (they are not compared).
      const differing = await compareWith(targetPath, data);
      if (differing === null) {
        run.note('unchanged', rel);
        if (tree) ownFiles.addInode(existingStats);
        else ownFiles.addPath(rel);
        return;
      }
      try {
        await restoreFile(entry, rel, at, differing.data, existing);
      } finally {
        if (differing.fd >= 0) closeSync(differing.fd);
      }
      return;
    }
    await restoreFile(entry, rel, at, data, existing);
  }

  /** The existing file's data compared with the entry's: null when the same. */
  async function compareWith(
    path: string | Buffer,
    data: EntryData,
  ): Promise<{ fd: number; data: EntryData } | null> {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return { fd: -1, data };
    }
    let rest: EntryData | null = null;
    try {
      rest = Buffer.isBuffer(data) ? (sameWhole(fd, data) ? null : data) : await sameData(fd, data);
    } finally {
      if (rest === null) closeSync(fd);
    }
    return rest === null ? null : { fd, data: rest };
  }

  async function restoreFile(
    entry: TarEntry,
    rel: string,
    at: Place | null,
    data: EntryData,
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
    if (!at) {
      if (entry.type === '0' || entry.type === '1') {
        run.note(listed, rel);
        plan.bytes += entry.type === '0' ? entry.size : 0;
        ownFiles.addPath(rel);
      }
      return;
    }
    const temp = at.safe.at(at.parent, tempName());
    try {
      if (entry.type === '0') {
        await writeFile(run, at, entry, data, temp);
      } else if (entry.type === '2') {
        writeSymlink(run, at, entry, temp);
      } else if (source) {
        linkSync(at.safe.at(source, split(safeRelative(byteString(entry.linkname)))[1]), temp);
        renameSync(temp, at.safe.at(at.parent, at.name));
      }
    } catch (error) {
      removeQuietly(temp);
      throw error;
    } finally {
      if (source) closeSync(source.fd);
    }
    if (entry.type === '0' || entry.type === '1') run.note(listed, rel);
    if (entry.type === '0') run.fileDone(entry);
  }

  /** Which planned symlink (a dry run's) the path `rel` would pass through, if any. */
  function plannedParentLink(rel: string): string | undefined {
    for (let end = rel.indexOf('/'); end >= 0; end = rel.indexOf('/', end + 1)) {
      if (plannedLinks.has(rel.slice(0, end))) return rel.slice(0, end);
    }
    return undefined;
  }
}
