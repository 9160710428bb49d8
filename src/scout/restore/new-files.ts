// Writing an entry's file, folder or symlink into an open folder of the restore (SafeTree):
// in place with O_EXCL in a folder the restore made, or to a temporary name and renamed.
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { shown } from './byte-paths.ts';
import { setLinkMetadata, setMetadata } from './entry-metadata.ts';
import { NEW_FILE } from './entry-paths.ts';
import type { RestoreRun } from './restore-run.ts';
import type { OpenFolder, SafeTree } from './safe-tree.ts';
import { SparseWriter } from './sparse-writer.ts';
import type { TarEntry } from './tar-reader.ts';
import { restorableXattrs } from './xattr-applier.ts';

/**
 * A streamed file's writes on the thread pool at a time: the file system's part of a big file
 * runs beside decryption and zstd. The pieces are the tar reader's, which frees an entry's
 * older ones as it reads on: this must stay below its FREED_HELD (tar-reader.ts).
 */
const WRITES_IN_FLIGHT = 4;

/** Files over this size took a while: their folder is checked again before the rename. */
const SMALL_FILE = 1024 * 1024;

/** An entry's data: all of it in one buffer (a small file read in already), or as it streams. */
export type EntryData = Buffer | AsyncGenerator<Buffer>;

/** Where a new entry goes: the open folder, its path below the root and the name in it. */
export interface Place {
  safe: SafeTree;
  parent: OpenFolder;
  rel: string;
  name: string;
}

const taken = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EEXIST';

/** Removes a half-written file; the entry's own error says what went wrong. */
export function removeQuietly(path: string | Buffer): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // The entry's own error is the one reported.
  }
}

/**
 * A folder, file or symlink made at its own name in a folder this restore made (O_EXCL: never
 * over or through anything). False when the name is taken after all (someone was faster): the
 * caller then goes the way of an existing folder. A file that fails half-written is removed.
 */
export async function createNew(
  run: RestoreRun,
  at: Place,
  entry: TarEntry,
  data: EntryData,
): Promise<boolean> {
  const target = at.safe.at(at.parent, at.name);
  if (entry.type === '5') {
    try {
      mkdirSync(target, 0o700);
    } catch (error) {
      if (taken(error)) return false;
      throw error;
    }
    const made = lstatSync(target);
    at.safe.markMade(at.rel);
    run.addFolder(at.rel, entry, made);
    return true;
  }
  if (entry.type === '2') {
    try {
      symlinkSync(entry.linkname, target);
    } catch (error) {
      if (taken(error)) return false;
      throw error;
    }
    setLinkMetadata(target, entry, run.asRoot, (message) => run.problem(at.rel, message));
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
    // A small file read in already is written without an await (most files of a big tree).
    if (Buffer.isBuffer(data)) {
      writeWhole(fd, data);
      handedOver = finishFile(run, fd, entry, at);
    } else {
      handedOver = await fillFile(run, fd, entry, at, data);
    }
  } catch (error) {
    closeSync(fd);
    removeQuietly(target);
    throw error;
  }
  if (!handedOver) closeSync(fd);
  run.note('add', at.rel);
  run.fileDone(entry);
  return true;
}

/** A file's data written into the new file `fd` (holes for zero blocks). */
function writeWhole(fd: number, data: Buffer): void {
  const writer = new SparseWriter(fd);
  writer.write(data);
  writer.finish();
}

/**
 * A new file's data (holes for zero blocks) and metadata, written through `fd`; remembered as
 * one of the restore's own. True when `fd` went to the xattr applier (which closes it).
 */
async function fillFile(
  run: RestoreRun,
  fd: number,
  entry: TarEntry,
  at: Place,
  data: EntryData,
  /** Puts the file at its name (a rename), when it was written elsewhere. */
  putInPlace?: () => void,
): Promise<boolean> {
  if (Buffer.isBuffer(data)) {
    writeWhole(fd, data);
    return finishFile(run, fd, entry, at, putInPlace);
  }
  const writer = new SparseWriter(fd, { inFlight: WRITES_IN_FLIGHT });
  try {
    for await (const chunk of data) {
      if (entry.size > SMALL_FILE) run.options.signal?.throwIfAborted();
      const room = writer.write(chunk);
      if (room) await room;
    }
    await writer.settle();
    writer.finish();
  } finally {
    // No write may still be on the pool when the caller closes `fd` (it could be reused).
    await writer.settle();
  }
  return finishFile(run, fd, entry, at, putInPlace);
}

/** A written file's metadata, then (`putInPlace`) its rename; true when `fd` went to the xattr applier. */
function finishFile(
  run: RestoreRun,
  fd: number,
  entry: TarEntry,
  at: Place,
  putInPlace?: () => void,
): boolean {
  const made = fstatSync(fd);
  run.ownFiles.addInode(made);
  const wanted = restorableXattrs(entry.xattrs, run.asRoot);
  const mode = setMetadata(
    fd,
    entry,
    'file',
    run.asRoot,
    (message) => run.problem(at.rel, message),
    wanted.length > 0,
    made,
  );
  // A big file took a while: check again that its folder was not swapped meanwhile.
  if (entry.size > SMALL_FILE) at.safe.verify(at.parent);
  putInPlace?.();
  if (wanted.length === 0) return false;
  run.xattrs.add(fd, shown(at.rel), wanted, mode);
  return true;
}

/** A file's data into `temp` (holes for zero blocks), its metadata, then the rename into place. */
export async function writeFile(
  run: RestoreRun,
  at: Place,
  entry: TarEntry,
  data: EntryData,
  temp: string | Buffer,
): Promise<void> {
  const target = at.safe.at(at.parent, at.name);
  const fd = openSync(temp, NEW_FILE, 0o600);
  let handedOver = false;
  try {
    handedOver = await fillFile(run, fd, entry, at, data, () => renameSync(temp, target));
  } finally {
    if (!handedOver) closeSync(fd);
  }
}

/** A symlink made at `temp` with its metadata, then renamed into place. */
export function writeSymlink(run: RestoreRun, at: Place, entry: TarEntry, temp: string | Buffer): void {
  symlinkSync(entry.linkname, temp);
  setLinkMetadata(temp, entry, run.asRoot, (message) => run.problem(at.rel, message));
  renameSync(temp, at.safe.at(at.parent, at.name));
}
