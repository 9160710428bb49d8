import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  createWriteStream,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { logger } from '../../core/log.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { setLinkMetadata, setMetadata } from './entry-metadata.ts';
import { assertDestination, type OpenFolder, SafeTree, UnsafeEntryError } from './safe-tree.ts';
import { snapshotTarStream } from './snapshot-stream.ts';
import { readTar, type TarEntry } from './tar-reader.ts';

export { UnsafeEntryError } from './safe-tree.ts';

const log = logger.child({ mod: 'scout/restore' });

/** Files up to this size are written in one call; bigger ones stream. */
const SMALL_FILE = 1024 * 1024;

export interface RestorePlan {
  add: string[];
  replace: string[];
  bytes: number;
  /** Entries restored without part of their metadata (owner, mode or time): "path: what failed". */
  warnings: string[];
}

export interface RestoreOptions {
  /** The encrypted snapshot (age → zstd → tar). */
  source: Readable;
  keys: ScoutKey[];
  /** The job folder restored into; nothing is written outside it. It must not be a symlink. */
  dest: string;
  /** A folder `dest` lies in (the scan root): no folder between them may be a symlink either. */
  within?: string;
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
   * Restore owners (uid/gid) and setuid/setgid bits, as `tar` does for root. Defaults to
   * whether this process runs as root; without it files lose their setuid/setgid bits.
   */
  asRoot?: boolean;
  /** An entry was restored without part of its metadata; the restore goes on. */
  onWarning?: (path: string, message: string) => void;
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

/**
 * For a dry run, which opens nothing: refuses a path whose parent folders (inside dest) are
 * symlinks. A real restore checks the same while opening them (SafeTree).
 */
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

/**
 * Temporary names beside the entries, `.<name>.backupd-<8 hex>`: a random start per restore
 * counting up (no random bytes drawn per file); created with O_EXCL all the same.
 */
function tempNames(): (name: string) => string {
  let next = randomBytes(4).readUInt32BE(0);
  return (name) => {
    next = (next + 1) >>> 0;
    return `.${name}.backupd-${next.toString(16).padStart(8, '0')}`;
  };
}

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

function writeAll(fd: number, buffer: Buffer): void {
  for (let at = 0; at < buffer.length; ) at += writeSync(fd, buffer, at, buffer.length - at);
}

/** `rel` as its parent folder and its name. */
function split(rel: string): [string, string] {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? ['', rel] : [rel.slice(0, slash), rel.slice(slash + 1)];
}

/**
 * Restores a snapshot into `dest`: files with matching paths are replaced, files absent from
 * the snapshot stay. Each file is written to a temporary name and renamed into place, so an
 * interrupted restore leaves every file either old or new. Absolute paths, `..`, devices and
 * paths through symlinks are refused before anything is written for them.
 *
 * Nothing is written by path: folders are opened from `dest` down without following links
 * (SafeTree), files are created with O_EXCL|O_NOFOLLOW inside the open folder, and owners,
 * modes and times are set on the open descriptors. Before each entry its folder's path is
 * checked to still lead to the open folder, so a folder renamed or swapped for a symlink
 * mid-restore stops the restore instead of redirecting it. `dest` itself must not be a link.
 */
export async function restoreArchive(options: RestoreOptions): Promise<RestorePlan> {
  const { dest } = options;
  const asRoot = options.asRoot ?? process.getuid?.() === 0;
  const plan: RestorePlan = { add: [], replace: [], bytes: 0, warnings: [] };
  const folders: { rel: string; entry: TarEntry; dev: number; ino: number }[] = [];
  const plannedFiles = new Set<string>();
  const knownFolders = new Set<string>();
  const plannedLinks = new Set<string>();
  const tempName = tempNames();
  assertDestination(dest, options.within);
  const tree = options.dryRun ? null : SafeTree.open(dest, options.within);
  const warn = (path: string, message: string) => {
    log.warn({ path }, message);
    plan.warnings.push(`${path}: ${message}`);
    options.onWarning?.(path, message);
  };
  const { tar: tarStream, plumbing } = snapshotTarStream(options);
  try {
    try {
      await extract(tarStream);
    } catch (error) {
      options.source.destroy();
      await plumbing;
      throw error;
    }
    const failure = await plumbing;
    if (failure) throw failure;
    // Folder owners, modes and times last: restoring their contents changed the times, and a
    // folder restored read-only must still take its files.
    if (tree) for (const folder of folders.reverse()) finishFolder(tree, folder);
  } finally {
    tree?.close();
  }
  return plan;

  function finishFolder(safe: SafeTree, folder: (typeof folders)[number]): void {
    try {
      const open = safe.folder(folder.rel, false, folder.rel);
      if (open.dev !== folder.dev || open.ino !== folder.ino || !safe.inPlace(open)) {
        warn(
          folder.rel,
          'the folder was moved or replaced (perhaps by a symlink) while restoring; its owner, mode and time are left as they are',
        );
        return;
      }
      setMetadata(open.fd, folder.entry, 'dir', asRoot, (message) => warn(folder.rel, message));
    } catch (error) {
      warn(folder.rel, `cannot set the folder's owner, mode and time: ${(error as Error).message}`);
    }
  }

  /** The open folder and name of a hard link's target, checked to be a file this restore may link to. */
  function linkSource(safe: SafeTree | null, rel: string, linked: string): OpenFolder | null {
    const refuse = () =>
      new UnsafeEntryError(`unsafe entry "${rel}": hard link to "${linked}", which is not a restored file`);
    if (!safe) {
      if (!plannedFiles.has(linked)) throw refuse();
      return null;
    }
    const [folderRel, name] = split(linked);
    let folder: OpenFolder;
    try {
      folder = safe.openDetached(folderRel, rel);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw refuse();
      throw error;
    }
    if (!plannedFiles.has(linked) && kindAt(safe.at(folder, name)) !== 'file') {
      closeSync(folder.fd);
      throw refuse();
    }
    return folder;
  }

  async function extract(input: Readable): Promise<void> {
    await readTar(input, async (entry: TarEntry, data) => {
      options.signal?.throwIfAborted();
      const rel = safeRelative(entry.path);
      if (rel === '') return;
      if (!['0', '1', '2', '5'].includes(entry.type)) {
        throw new UnsafeEntryError(
          `unsafe entry "${entry.path}": devices, FIFOs and other special files are refused`,
        );
      }
      const [parentRel, name] = split(rel);
      let parent: OpenFolder | null = null;
      if (tree) {
        parent = tree.folder(parentRel, true, rel);
        tree.verify(parent);
      } else {
        await checkParents(dest, rel, knownFolders);
      }
      // A dry run writes nothing, so it remembers what the restore would create to refuse the same entries.
      const parentLink = rel
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/'))
        .find((prefix) => plannedLinks.has(prefix));
      if (parentLink)
        throw new UnsafeEntryError(`unsafe entry "${rel}": passes through the symlink ${parentLink}`);
      const targetPath = tree && parent ? tree.at(parent, name) : join(dest, rel);
      const existing = kindAt(targetPath);
      if (entry.type === '5') {
        if (existing === 'symlink' || existing === 'file') {
          throw new UnsafeEntryError(`cannot restore folder "${rel}": a ${existing} is in the way`);
        }
        if (tree) {
          // Made private; its own mode comes once its contents are in (finishFolder).
          if (existing === 'missing') mkdirSync(targetPath, 0o700);
          const made = lstatSync(targetPath);
          if (!made.isDirectory())
            throw new UnsafeEntryError(`cannot restore folder "${rel}": something else is in the way`);
          folders.push({ rel, entry, dev: made.dev, ino: made.ino });
        }
        return;
      }
      if (existing === 'dir') throw new UnsafeEntryError(`cannot restore "${rel}": a folder is in the way`);
      let source: OpenFolder | null = null;
      if (entry.type === '1') {
        const linked = safeRelative(entry.linkname);
        if (!tree) await checkParents(dest, linked, knownFolders);
        source = linkSource(tree, rel, linked);
      }
      if (entry.type === '0' || entry.type === '1') {
        (existing === 'missing' ? plan.add : plan.replace).push(rel);
        plan.bytes += entry.type === '0' ? entry.size : 0;
        plannedFiles.add(rel);
      }
      if (entry.type === '2') plannedLinks.add(rel);
      if (!tree || !parent) return;
      const temp = tree.at(parent, tempName(name));
      const entryWarn = (message: string) => warn(rel, message);
      try {
        if (entry.type === '0') {
          const fd = openSync(temp, NEW_FILE, 0o600);
          try {
            if (entry.size <= SMALL_FILE) {
              const chunks: Buffer[] = [];
              for await (const chunk of data) chunks.push(chunk);
              writeAll(fd, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
            } else {
              await pipeline(data, createWriteStream(temp, { fd, autoClose: false }));
            }
            setMetadata(fd, entry, 'file', asRoot, entryWarn);
          } finally {
            closeSync(fd);
          }
          // A big file took a while: check again that its folder was not swapped meanwhile.
          if (entry.size > SMALL_FILE) tree.verify(parent);
        } else if (entry.type === '2') {
          symlinkSync(entry.linkname, temp);
          setLinkMetadata(temp, entry, asRoot, entryWarn);
        } else if (source) {
          linkSync(tree.at(source, posix.basename(safeRelative(entry.linkname))), temp);
        }
        renameSync(temp, tree.at(parent, name));
        if (entry.type === '0') options.onProgress?.(plan.bytes);
      } catch (error) {
        rmSync(temp, { force: true });
        throw error;
      } finally {
        if (source) closeSync(source.fd);
      }
    });
  }
}
