// What backupd keeps in its data dir is for its own user only: the Station's signing key and
// password hashes sit in PGlite's files, the Scout's Station token in scout.db. Outside
// systemd's StateDirectoryMode=0700 (`npm start`, ./data/*, any --data-dir) a umask of 022
// left scout.db 0644 and PGlite's ~1,000 files 0666 (PGlite chmods them itself, so a umask
// does not reach them): every local user could read the token and the keys. Every backupd
// process therefore runs with umask 077 (set first thing in src/main.ts), and at start-up the
// data dir is made private again here.
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { logger } from './log.ts';

const log = logger.child({ mod: 'core/private-files' });

/** The permission bits of group and others. */
const OPEN_BITS = 0o077;
/** How many entries a log line names. */
const EXAMPLES = 10;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** Removes group and other bits from one entry through a descriptor (a link swapped in is not followed). */
function tighten(path: string, isDir: boolean): boolean {
  const fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (isDir ? O_DIRECTORY : 0));
  try {
    const mode = fstatSync(fd).mode;
    if ((mode & OPEN_BITS) === 0) return false;
    fchmodSync(fd, mode & 0o7777 & ~OPEN_BITS);
    return true;
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes group and other permissions away from `root` and everything below it: folders first,
 * so nobody else can swap an entry while its contents are walked. Links are never followed
 * and only files and folders are touched; `skip` (the Scout's scan root, when it lies inside)
 * keeps its modes. Returns how many entries changed and the first few of them (a count, not a
 * list: a data dir holds hundreds of thousands of snapshot files).
 */
export function tightenTree(root: string, skip: string[] = []): { count: number; examples: string[] } {
  const skipped = new Set(skip.map((path) => resolve(path)));
  const changed = { count: 0, examples: [] as string[] };
  const failed = { count: 0, examples: [] as string[] };
  const note = (into: typeof changed, what: string) => {
    into.count += 1;
    if (into.examples.length < EXAMPLES) into.examples.push(what);
  };
  const visit = (path: string) => {
    if (skipped.has(path)) return;
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (!stats || !(stats.isFile() || stats.isDirectory())) return;
    const attempt = (step: () => void) => {
      try {
        step();
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Gone since the listing, or replaced by a link: nothing of ours to tighten.
        if (code !== 'ENOENT' && code !== 'ELOOP') note(failed, `${path} (${code})`);
      }
    };
    attempt(() => {
      if ((stats.mode & OPEN_BITS) !== 0 && tighten(path, stats.isDirectory())) note(changed, path);
    });
    if (stats.isDirectory()) {
      attempt(() => {
        for (const name of readdirSync(path)) visit(join(path, name));
      });
    }
  };
  visit(resolve(root));
  // One line, however many (a data dir owned by another user fails on every entry).
  if (failed.count > 0) {
    log.warn(failed, 'cannot make these entries of the data dir private; check their owner');
  }
  return changed;
}

/**
 * At start-up: the data dir and everything in it made private to this user, with one log line
 * naming what was open before (nothing is logged when all was private already).
 */
export function makeDataDirPrivate(dataDir: string, skip: string[] = []): void {
  const changed = tightenTree(dataDir, skip);
  if (changed.count === 0) return;
  const root = resolve(dataDir);
  log.warn(
    {
      data_dir: root,
      count: changed.count,
      examples: changed.examples.map((path) => relative(root, path) || '.'),
    },
    `the data dir was open to other users of this host: removed group and other permissions from ${changed.count} files and folders`,
  );
}
