import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
} from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fsPath, shown } from './byte-paths.ts';

/** An archive entry that would write outside the job folder: the restore stops. */
export class UnsafeEntryError extends Error {
  override name = 'UnsafeEntryError';
}

/**
 * An entry the restore refuses without any risk to what lies outside (a device, something in
 * the way): a problem of that entry; the restore goes on with the next.
 */
export class RefusedEntryError extends Error {
  override name = 'RefusedEntryError';
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * A folder the archive does not hold but a restore needs (the destination, a missing parent) is
 * made 0755, as tar makes one under the usual umask 022. Set on the open folder, because the
 * process umask is 077 (src/main.ts) and must not decide what a restore writes.
 */
const MISSING_FOLDER_MODE = 0o755;

/** Makes the folder `path` when missing; true when this call made it. */
function makeFolder(path: string | Buffer): boolean {
  try {
    mkdirSync(path, MISSING_FOLDER_MODE);
    return true;
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
    return false;
  }
}

/**
 * On Linux `/proc/<pid>/fd/<fd>/<name>` is `name` inside the folder open as `fd`, whatever has
 * happened to that folder's path since it was opened: openat() for Node, which has none.
 * Without /proc (not Linux) names are joined to the folder's path, and only the check before
 * each entry (`verify`) guards against a swap.
 */
const PROC_FD = existsSync('/proc/self/fd');

/**
 * `/proc/<pid>/fd`, with the pid as this /proc sees it (`/proc/self` read once, so the pid is
 * ours even where /proc belongs to another pid namespace): the `self` link costs a lookup of
 * its own on every path through it, and a restore resolves one or two such paths per file.
 * Measured on tmpfs, creating a file: 12.7–15.8 µs through /proc/self/fd, 9.9–13.6 through
 * /proc/<pid>/fd.
 */
const PROC_FD_DIR = PROC_FD ? `/proc/${readlinkSync('/proc/self')}/fd` : '';

/**
 * A folder of the restore, open by descriptor. `rel` is its path below the root ('' = root), a
 * byte string (src/scout/restore/byte-paths.ts).
 */
export interface OpenFolder {
  rel: string;
  fd: number;
  dev: number;
  ino: number;
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * The restore destination as a tree of open folders. Each folder is opened from its parent's
 * descriptor, one component at a time, with O_NOFOLLOW: a folder swapped for a symlink is
 * refused, and a name resolved through `at()` lands in the folder that was opened, never where
 * a link points. The folders of the current path stay open (a tar lists a folder's entries
 * together), so most entries cost no extra open.
 */
export class SafeTree {
  readonly root: string;
  private readonly stack: OpenFolder[];
  /**
   * Folders (rel) this restore made: nobody else could have put anything in them (made 0700,
   * or 0755 for a missing parent, by this process), so a file there is created new in place.
   */
  private readonly made = new Set<string>();
  /**
   * Closes a folder the path moved away from. A restore that writes files on another thread
   * (file-batches.ts) keeps it open until the files queued for it are written.
   */
  releaseFd: (fd: number) => void = closeSync;

  private constructor(root: string, rootFolder: OpenFolder, rootMade: boolean) {
    this.root = root;
    this.stack = [rootFolder];
    if (rootMade) this.made.add('');
  }

  /** Whether this restore made the folder `rel` (so every name in it is new). */
  isMade(rel: string): boolean {
    return this.made.has(rel);
  }

  /** Records that this restore made the folder `rel` (an archive's folder entry). */
  markMade(rel: string): void {
    this.made.add(rel);
  }

  /**
   * Opens the restore destination `root` (made when missing), which must be a real folder: a
   * symlink there is refused, not followed. With `within` (the scan root), every folder from
   * below `within` down to `root` is opened without following links too.
   */
  static open(root: string, within?: string): SafeTree {
    const chain = destinationChain(root, within);
    assertDestination(root, within);
    let fd: number;
    let rootMade = false;
    if (within === undefined) {
      const first = mkdirSync(root, { recursive: true, mode: MISSING_FOLDER_MODE });
      rootMade = first !== undefined;
      if (first !== undefined) {
        for (const made of [first, ...destinationChain(root, first)]) {
          const madeFd = openSync(made, DIR_FLAGS);
          fchmodSync(madeFd, MISSING_FOLDER_MODE);
          closeSync(madeFd);
        }
      }
      fd = openDestination(root, root, within);
    } else {
      fd = openSync(within, constants.O_RDONLY | constants.O_DIRECTORY);
      for (const path of chain) {
        const name = path.slice(path.lastIndexOf('/') + 1);
        const at = PROC_FD ? `${PROC_FD_DIR}/${fd}/${name}` : path;
        let made: boolean;
        try {
          made = makeFolder(at);
        } catch (error) {
          closeSync(fd);
          throw error;
        }
        try {
          const next = openDestination(at, root, within);
          closeSync(fd);
          fd = next;
          if (made) fchmodSync(fd, MISSING_FOLDER_MODE);
          rootMade = made;
        } catch (error) {
          closeSync(fd);
          throw error;
        }
      }
    }
    const s = fstatSync(fd);
    return new SafeTree(root, { rel: '', fd, dev: s.dev, ino: s.ino }, rootMade);
  }

  /** The path for a *Sync call on `name` inside `folder`, resolved from the open folder itself. */
  at(folder: OpenFolder, name: string): string | Buffer {
    if (PROC_FD) return fsPath(`${PROC_FD_DIR}/${folder.fd}`, name);
    return fsPath(this.root, folder.rel === '' ? name : `${folder.rel}/${name}`);
  }

  /**
   * The folder `rel`, opened from the root without following links; missing folders are made
   * when `create` (MISSING_FOLDER_MODE). `entry` names the
   * archive entry in errors. The folder stays open until the path moves elsewhere or `close()`.
   */
  folder(rel: string, create: boolean, entry: string): OpenFolder {
    // The same folder as the entry before: nothing to open or close (most entries).
    const open = this.stack[this.stack.length - 1] as OpenFolder;
    if (open.rel === rel) return open;
    const parts = rel === '' ? [] : rel.split('/');
    let depth = 0;
    let prefix = '';
    while (depth < parts.length && depth + 1 < this.stack.length) {
      prefix = depth === 0 ? (parts[0] as string) : `${prefix}/${parts[depth]}`;
      if (this.stack[depth + 1]?.rel !== prefix) break;
      depth += 1;
    }
    while (this.stack.length > depth + 1) this.releaseFd((this.stack.pop() as OpenFolder).fd);
    for (let i = depth; i < parts.length; i += 1) {
      const parent = this.stack[this.stack.length - 1] as OpenFolder;
      this.stack.push(this.openChild(parent, parts[i] as string, create, entry));
    }
    return this.stack[this.stack.length - 1] as OpenFolder;
  }

  /** Like `folder()` but outside the kept path: the caller closes it (`closeSync(fd)`). */
  openDetached(rel: string, entry: string): OpenFolder {
    const parts = rel === '' ? [] : rel.split('/');
    let current: OpenFolder | null = null;
    const root = this.stack[0] as OpenFolder;
    for (const part of parts) {
      const next: OpenFolder = this.openChild(current ?? root, part, false, entry);
      if (current) closeSync(current.fd);
      current = next;
    }
    if (current) return current;
    const fd = openSync(this.at(root, '.'), DIR_FLAGS);
    return { ...root, fd };
  }

  /**
   * Stops the restore when `folder`'s path no longer leads to the folder open as it (someone
   * renamed it or a folder above it, or put a symlink in its place).
   */
  verify(folder: OpenFolder): void {
    if (!this.inPlace(folder)) throw this.movedError(folder);
  }

  /** The error that stops a restore whose folder `folder` was moved or replaced. */
  movedError(folder: OpenFolder): UnsafeEntryError {
    const what =
      folder.rel === '' ? `the restore destination ${this.root}` : `the folder "${shown(folder.rel)}"`;
    return new UnsafeEntryError(
      `${what} was moved or replaced (perhaps by a symlink) while restoring; restore stopped so nothing is written through it — check the folder and restore again`,
    );
  }

  /** Whether `folder`'s path still leads to the folder open as it. */
  inPlace(folder: OpenFolder): boolean {
    const s = lstatSync(this.pathOf(folder), { throwIfNoEntry: false });
    return s !== undefined && s.dev === folder.dev && s.ino === folder.ino;
  }

  /** `folder`'s path from the root (what `inPlace` checks). */
  pathOf(folder: OpenFolder): string | Buffer {
    return fsPath(this.root, folder.rel);
  }

  close(): void {
    for (const folder of this.stack.splice(0)) closeSync(folder.fd);
  }

  private openChild(parent: OpenFolder, name: string, create: boolean, entry: string): OpenFolder {
    const rel = parent.rel === '' ? name : `${parent.rel}/${name}`;
    const path = this.at(parent, name);
    let fd: number;
    try {
      fd = openSync(path, DIR_FLAGS);
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOENT' && create) {
        const made = makeFolder(path);
        const child = this.openChild(parent, name, false, entry);
        if (made) {
          fchmodSync(child.fd, MISSING_FOLDER_MODE);
          this.made.add(rel);
        }
        return child;
      }
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
          throw new UnsafeEntryError(
            `unsafe entry "${shown(entry)}": passes through the symlink ${shown(rel)}`,
          );
        }
        throw new RefusedEntryError(`${shown(rel)} is not a folder`);
      }
      throw error;
    }
    const s = fstatSync(fd);
    return { rel, fd, dev: s.dev, ino: s.ino };
  }
}

/** The folders from below `within` down to `dest`; just `dest` without `within`. */
function destinationChain(dest: string, within: string | undefined): string[] {
  if (within === undefined) return [dest];
  const rel = relative(within, dest);
  if (rel === '') return [];
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new UnsafeEntryError(`the restore destination ${dest} is not inside ${within}`);
  }
  const parts = rel.split(sep);
  return parts.map((_, i) => join(within, ...parts.slice(0, i + 1)));
}

/** Opens one folder of the destination's chain without following a link there. */
function openDestination(path: string, dest: string, within: string | undefined): number {
  try {
    return openSync(path, DIR_FLAGS);
  } catch (error) {
    if (codeOf(error) === 'ELOOP' || codeOf(error) === 'ENOTDIR') assertDestination(dest, within);
    throw error;
  }
}

/**
 * Refuses a restore destination that is a symlink or not a folder (a missing one is fine) or,
 * with `within`, that is reached through a symlink below `within`.
 */
export function assertDestination(dest: string, within?: string): void {
  for (const path of destinationChain(dest, within)) {
    const s = lstatSync(path, { throwIfNoEntry: false });
    if (!s) return;
    const what =
      path === dest
        ? `the restore destination ${dest} is`
        : `the restore destination ${dest} passes through ${path}, which is`;
    if (s.isSymbolicLink()) {
      throw new UnsafeEntryError(
        `${what} a symbolic link; restore refuses to follow it — replace the link with a real folder, or restore into the folder it points to`,
      );
    }
    if (!s.isDirectory()) {
      throw new UnsafeEntryError(`${what} not a folder; move it away and restore again`);
    }
  }
}
