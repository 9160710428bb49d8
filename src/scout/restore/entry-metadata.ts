import { fchmodSync, fchownSync, futimesSync, lchownSync, lutimesSync } from 'node:fs';

/** What an archive entry says about its owner, mode and time. */
export interface EntryMetadata {
  mode: number;
  uid: number;
  gid: number;
  mtimeMs: number;
}

export const SET_ID = 0o6000;

/** A uid or gid chown can set: not negative (-1 means "leave as is") and not a fraction or NaN. */
export const validId = (id: number) => Number.isSafeInteger(id) && id >= 0 && id < 0xffffffff;

/** The problems of an owner, mode or time that could not be set, `why` being the error's code. */
export const ownerNotSet = (meta: EntryMetadata, why: string, dropped: boolean) =>
  `cannot set the owner to ${meta.uid}:${meta.gid} (${why})${dropped ? '; restored without its setuid/setgid bits' : ''}`;
export const modeNotSet = (mode: number, why: string) => `cannot set the mode ${mode.toString(8)} (${why})`;
export const timeNotSet = (why: string) => `cannot set the modification time (${why})`;

const reason = (error: unknown) =>
  (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

function chown(set: () => void, meta: EntryMetadata): void {
  if (!validId(meta.uid) || !validId(meta.gid)) throw new Error('not a valid uid/gid');
  set();
}

/**
 * Sets an open file's or folder's owner, then mode, then modification time, as `tar -p` does:
 * chown first because it clears setuid/setgid. The owner is set only `asRoot`; otherwise, or
 * when the owner cannot be set, a file's setuid/setgid bits are dropped, so a snapshot never
 * turns a user's setuid file into a setuid file of whoever restores it. Each failure is passed
 * to `warn` and the rest still applies. With `deferMode` the mode is only worked out and
 * returned, for the caller to set later (after extended attributes: a read-only file takes
 * none). A mode set after the time leaves the time as it is. `owner` is the new file's owner as
 * created: when it is already the entry's, the chown is left out (a new file has no
 * setuid/setgid bits for it to clear; one system call less per file of a restore as root).
 */
export function setMetadata(
  fd: number,
  meta: EntryMetadata,
  kind: 'file' | 'dir',
  asRoot: boolean,
  warn: (message: string) => void,
  deferMode = false,
  owner?: { uid: number; gid: number },
): number {
  let mode = meta.mode & 0o7777;
  const ownerSet = owner !== undefined && owner.uid === meta.uid && owner.gid === meta.gid;
  if (asRoot && !ownerSet) {
    try {
      chown(() => fchownSync(fd, meta.uid, meta.gid), meta);
    } catch (error) {
      const dropped = kind === 'file' && (mode & SET_ID) !== 0;
      if (dropped) mode &= ~SET_ID;
      warn(ownerNotSet(meta, reason(error), dropped));
    }
  } else if (!asRoot && kind === 'file') {
    mode &= ~SET_ID;
  }
  if (!deferMode) {
    try {
      fchmodSync(fd, mode);
    } catch (error) {
      warn(modeNotSet(mode, reason(error)));
    }
  }
  try {
    futimesSync(fd, meta.mtimeMs / 1000, meta.mtimeMs / 1000);
  } catch (error) {
    warn(timeNotSet(reason(error)));
  }
  return mode;
}

/** A symlink's owner (only `asRoot`) and time, set on the link itself; links have no mode. */
export function setLinkMetadata(
  path: string | Buffer,
  meta: EntryMetadata,
  asRoot: boolean,
  warn: (message: string) => void,
): void {
  if (asRoot) {
    try {
      chown(() => lchownSync(path, meta.uid, meta.gid), meta);
    } catch (error) {
      warn(ownerNotSet(meta, reason(error), false));
    }
  }
  try {
    lutimesSync(path, meta.mtimeMs / 1000, meta.mtimeMs / 1000);
  } catch (error) {
    warn(timeNotSet(reason(error)));
  }
}
