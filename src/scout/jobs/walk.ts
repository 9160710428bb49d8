// Walks a job folder, applies its exclusions and fingerprints the result while it streams:
// entries are yielded one at a time (the archive writes each as it comes) and nothing grows
// with the job's size but the folders open on the way down. Nothing that happens to a single
// file (vanished, unreadable, odd type) stops a walk; what is left out for a reason the
// operator should know is reported through `onSkip`.
//
// Names are bytes: folders are read as byte strings (src/scout/jobs/byte-order.ts) and every
// system call gets the path's exact bytes, so a name that is not UTF-8 is walked like any other.
import { constants, lstatSync, type Stats } from 'node:fs';
import { access, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { wrapError } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import { escapeName } from '../../shared/byte-names.ts';
import { type ByteString, bytesOf, sortByByteString, sortByteStrings, utf8ByteString } from './byte-order.ts';
import { createExcluder } from './exclude.ts';
import type { JobConfig } from './marker.ts';
import { createPacer } from './pace.ts';
import type { FolderMark, WalkFingerprints } from './walk-fingerprints.ts';
import { runEnd } from './walk-order.ts';

export { type FingerprintEntry, jobFingerprint } from './fingerprint.ts';

const log = logger.child({ mod: 'scout/jobs' });

/** How many names are examined (lstat) at a time, between turns of the event loop. */
const STAT_BATCH = 64;
/** A name's kind in a typed listing (d_type): a regular file, a folder, anything else. */
const FILE = 1;
const FOLDER = 2;
/**
 * Folders of a typed listing whose own listing is started ahead, per folder on the way down:
 * the walk then rarely waits for a thread-pool readdir (on the 4 GiB bench dataset the archive's
 * main thread waited 2.5 s in all for 3,245 of them, ~0.8 ms each, while a core was idle).
 */
const LIST_AHEAD = 2;
/**
 * A listing started ahead is used only if its folder last changed this long before the listing
 * began (by the folder's mtime when the walk gets there): a file created in it since is then
 * seen, as a listing made on arrival sees it. The margin covers the file system's coarse clock.
 */
const UNCHANGED_BEFORE_MS = 50;

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
  /**
   * What the walk saw (lstat, or stat of a followed link): the archive checks the file it opens
   * against them. None (and size, mode and mtime 0) for a file the walk left to its opener to
   * examine (`filesExaminedByOpener`), until the opener fills them in (`fillStats`).
   */
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

/**
 * What became of a walked entry, as its consumer tells the walk (the value given to the
 * generator's `next`; none means `archived`): the archive may leave it out or archive it
 * incomplete (src/scout/archive/tar-writer.ts), which the fingerprints count apart.
 */
export type EntryOutcome = 'archived' | 'incomplete' | 'left_out';

export interface WalkOptions {
  signal?: AbortSignal;
  /** An entry left out: unreadable, a FIFO, socket or device, a folder that cannot be listed. */
  onSkip?: (skipped: SkippedEntry) => void;
  /** Fingerprints to compute on the way (walk-fingerprints.ts); read them when the walk is done. */
  fingerprints?: WalkFingerprints;
  /**
   * Regular files (as their folder's listing tells) are not examined by the walk: the consumer
   * opens each one and fills in its stats (`fillStats`) before it answers the entry's outcome,
   * so the fingerprints count what it saw. The archive does (tar-writer.ts): its fstat of the
   * open file replaces the walk's lstat, one system call less per file. Exclusions go by name
   * and are applied as always; a file the consumer cannot open is its to leave out.
   */
  filesExaminedByOpener?: boolean;
}

interface Child {
  name: ByteString;
  stats: Stats | null;
  /** A regular file by its folder's listing, left unexamined (`filesExaminedByOpener`). */
  file?: true;
  /** Why lstat failed, when it did for another reason than the entry vanishing. */
  code?: string;
}

/** A child to visit: what it is, with the stats that decide it (lstat, or stat of a followed link). */
interface Visit {
  abs: ByteString;
  rel: ByteString;
  type: WalkEntry['type'];
  /** None for a file left to its opener to examine. */
  stats: Stats | null;
  linkTarget?: Buffer;
  /** A folder's realpath chain (when following symlinks) and its place in the fingerprints. */
  chain?: Set<ByteString> | null;
  mark?: FolderMark | null;
}

interface Frame {
  abs: ByteString;
  rel: ByteString;
  names: ByteString[];
  /** The kind of names[i] by the listing (FILE, FOLDER, 0), when files are left to their opener. */
  kinds: Uint8Array | null;
  /** The next name whose listing may be started ahead (a FOLDER of `kinds`), and how many are. */
  ahead: number;
  listed: number;
  /** The next name to visit. */
  next: number;
  /** lstat results of names[batchStart …]. */
  ready: Child[];
  batchStart: number;
  /** Folders whose visit waits for the run of names after them (walk-order.ts), innermost last. */
  deferred: Array<{ visit: Visit; until: number }>;
  /** realpaths of this folder and its ancestors, kept only when following symlinks. */
  chain: Set<ByteString> | null;
  /** This folder's place in the fingerprints; null for the job folder. */
  mark: FolderMark | null;
}

const ignoreMissing = () => null;
/** The absolute and the job-relative path of a name in a folder being walked. */
const absOf = (frame: Frame, name: ByteString) => (frame.abs === '/' ? `/${name}` : `${frame.abs}/${name}`);
const relOf = (frame: Frame, name: ByteString) => (frame.rel === '' ? name : `${frame.rel}/${name}`);
const BYTES = { encoding: 'latin1' } as const;
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'EIO';

/**
 * lstat of each name, synchronously: each call is a short system call, and its async form
 * costs a thread-pool round trip and a promise apiece. Walking 204,000 files took 3.8-4.1
 * CPU-s with 64 async lstats in flight, 1.6-1.8 CPU-s this way (and less wall time); the
 * walk still gives the event loop a turn every 20 ms (pace.ts), and the archive opens and
 * reads files synchronously for the same reason (src/scout/archive/tar-writer.ts).
 */
function statBatch(dir: ByteString, names: ByteString[], kinds?: Uint8Array | null, from = 0): Child[] {
  return names.map((name, i): Child => {
    if (kinds?.[from + i] === FILE) return { name, stats: null, file: true };
    try {
      return { name, stats: lstatSync(bytesOf(`${dir}/${name}`)) };
    } catch (error) {
      const code = codeOf(error);
      return code === 'ENOENT' ? { name, stats: null } : { name, stats: null, code };
    }
  });
}

/** A folder's names, sorted, and (when asked) the kind of each (FILE, FOLDER, 0). */
interface Listing {
  names: ByteString[];
  kinds: Uint8Array | null;
}

/** A folder's listing; throws when it cannot be read. */
async function listNames(abs: ByteString, typed: boolean): Promise<Listing> {
  if (!typed) return { names: sortByteStrings(await readdir(bytesOf(abs), BYTES)), kinds: null };
  // With the type of each name (d_type; unknown ones lstat'ed by Node).
  const entries = await readdir(bytesOf(abs), { ...BYTES, withFileTypes: true });
  sortByByteString(entries, (entry) => entry.name);
  const kinds = new Uint8Array(entries.length);
  const names = entries.map((entry, i) => {
    kinds[i] = entry.isFile() ? FILE : entry.isDirectory() ? FOLDER : 0;
    return entry.name;
  });
  return { names, kinds };
}

/**
 * A folder's listing (with `typed`, which names are regular files); null when it vanished; an
 * error code when it cannot be read.
 */
async function listFolder(abs: ByteString, typed: boolean): Promise<Listing | string | null> {
  try {
    return await listNames(abs, typed);
  } catch (error) {
    const code = codeOf(error);
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : code;
  }
}

/** Fills in what an entry's stats tell: the walk's own, or its opener's (`filesExaminedByOpener`). */
export function fillStats(entry: WalkEntry, stats: Stats): WalkEntry {
  entry.size = entry.type === 'file' ? stats.size : 0;
  entry.mode = stats.mode & 0o7777;
  entry.mtimeMs = stats.mtimeMs;
  entry.dev = stats.dev;
  entry.ino = stats.ino;
  entry.nlink = stats.nlink;
  entry.uid = stats.uid;
  entry.gid = stats.gid;
  return entry;
}

/** An entry with its stats; a file's without any is left to its opener to examine. */
function entryOf(path: ByteString, type: WalkEntry['type'], stats: Stats | null): WalkEntry {
  // Every field set from the start: one object shape whether the stats come now or later.
  const entry: WalkEntry = {
    path: bytesOf(path),
    type,
    size: 0,
    mode: 0,
    mtimeMs: 0,
    dev: undefined,
    ino: undefined,
    nlink: undefined,
    uid: undefined,
    gid: undefined,
  };
  return stats ? fillStats(entry, stats) : entry;
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
 * before children, in the byte order of the fingerprint's records (walk-order.ts), with the
 * job's exclusions applied. Files this process may not read, FIFOs, sockets, devices and
 * folders that cannot be listed are left out (a folder that cannot be listed is kept, empty)
 * and reported through `onSkip`. The consumer may tell the outcome of each entry through
 * `next(outcome)` (EntryOutcome); `options.fingerprints` count them as they come.
 */
export async function* walkJob(
  jobDir: string,
  config: JobConfig,
  options: WalkOptions = {},
): AsyncGenerator<WalkEntry, void, EntryOutcome | undefined> {
  const { signal, fingerprints } = options;
  const typed = options.filesExaminedByOpener === true;
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
  let rootListing: Listing;
  try {
    rootListing = await listNames(root, typed);
  } catch (error) {
    throw wrapError(`unable to read job folder ${jobDir}`, error);
  }
  const rootChain = follow ? new Set([await realpath(bytesOf(root), BYTES)]) : null;
  const frameOf = (
    abs: ByteString,
    rel: ByteString,
    { names, kinds }: Listing,
    chain: Set<ByteString> | null,
    mark: FolderMark | null,
  ): Frame => ({
    abs,
    rel,
    names,
    kinds,
    ahead: 0,
    listed: 0,
    next: 0,
    ready: [],
    batchStart: 0,
    deferred: [],
    chain,
    mark,
  });
  const stack: Frame[] = [frameOf(root, '', rootListing, rootChain, null)];
  /** Listings started ahead (typed walks), by folder, and when; each is taken once, when the walk gets there. */
  const listedAhead = new Map<ByteString, { listing: Promise<Listing | string | null>; at: number }>();

  /**
   * Starts listing the folders of `frame` (by its typed listing) ahead of the walk, in order,
   * so that LIST_AHEAD of them are listed or being listed; excluded ones are not touched.
   */
  function listAhead(frame: Frame): void {
    const { kinds, names } = frame;
    if (!kinds) return;
    frame.ahead = Math.max(frame.ahead, frame.next);
    while (frame.listed < LIST_AHEAD && frame.ahead < names.length) {
      const at = frame.ahead;
      frame.ahead += 1;
      if (kinds[at] !== FOLDER) continue;
      const name = names[at] as ByteString;
      if (excluder.excludesBytes(relOf(frame, name), true)) continue;
      const abs = absOf(frame, name);
      listedAhead.set(abs, { at: Date.now(), listing: listFolder(abs, true) });
      frame.listed += 1;
    }
  }

  /**
   * The listing of a folder of `parent`: the one started ahead when the folder has not changed
   * since (its mtime now, one lstat), or a new one.
   */
  function listingOf(abs: ByteString, parent: Frame): Promise<Listing | string | null> {
    const ahead = listedAhead.get(abs);
    if (!ahead) return listFolder(abs, typed);
    listedAhead.delete(abs);
    parent.listed -= 1;
    listAhead(parent);
    const now = lstatSync(bytesOf(abs), { throwIfNoEntry: false });
    const unchanged = now?.isDirectory() && now.mtimeMs < ahead.at - UNCHANGED_BEFORE_MS;
    return unchanged ? ahead.listing : listFolder(abs, typed);
  }
  listAhead(stack[0] as Frame);

  /**
   * What the next name of `frame` is, or null when it is not visited (reported when it should
   * be). A promise only when a system call beyond the lstat is needed (a symlink, a folder's
   * realpath when following links, a file the mode bits refuse): the common entry costs no
   * turn of the event loop.
   */
  function resolve(frame: Frame, child: Child): Visit | null | Promise<Visit | null> {
    const { name, stats: own, code } = child;
    const abs = absOf(frame, name);
    const rel = relOf(frame, name);
    if (child.file)
      return excluder.excludesBytes(rel, false) ? null : { abs, rel, type: 'file', stats: null };
    if (!own) {
      // Vanished since the listing: nothing to report. Any other failure is.
      if (code && !excluder.excludesBytes(rel, false)) skip(rel, `cannot be examined (${code})`);
      return null;
    }
    if (own.isSymbolicLink()) return resolveLink(frame, abs, rel, own);
    return classify(frame, abs, rel, own);
  }

  /** A symlink: kept as a link, or (following links) what it points to. */
  async function resolveLink(
    frame: Frame,
    abs: ByteString,
    rel: ByteString,
    own: Stats,
  ): Promise<Visit | null> {
    if (!follow) {
      if (excluder.excludesBytes(rel, false)) return null;
      const target = await readlink(bytesOf(abs), { encoding: 'buffer' }).catch(ignoreMissing);
      if (target === null) return null;
      return { abs, rel, type: 'symlink', stats: own, linkTarget: target };
    }
    const followed = await stat(bytesOf(abs)).catch(ignoreMissing);
    if (!followed) {
      log.debug({ path: escapeName(bytesOf(rel)) }, 'skipping dangling symlink');
      return null;
    }
    return classify(frame, abs, rel, followed);
  }

  /** A folder or file by the stats that decide it; anything else is reported and not visited. */
  function classify(
    frame: Frame,
    abs: ByteString,
    rel: ByteString,
    stats: Stats,
  ): Visit | null | Promise<Visit | null> {
    if (stats.isDirectory()) {
      if (excluder.excludesBytes(rel, true)) return null;
      if (frame.chain) return chained(frame.chain, abs, rel, stats);
      return { abs, rel, type: 'dir', stats, chain: null, mark: fingerprints?.folder(rel) ?? null };
    }
    if (stats.isFile()) {
      if (excluder.excludesBytes(rel, false)) return null;
      if (!who.mayRead(stats)) return readable(abs, rel, stats);
      return { abs, rel, type: 'file', stats };
    }
    // Sockets, FIFOs and devices are not data we can archive.
    if (!excluder.excludesBytes(rel, false)) skip(rel, `${specialKind(stats)}, not archived`);
    return null;
  }

  /** A folder met while following links: not visited when it loops back to a parent. */
  async function chained(
    parents: Set<ByteString>,
    abs: ByteString,
    rel: ByteString,
    stats: Stats,
  ): Promise<Visit | null> {
    const real = await realpath(bytesOf(abs), BYTES).catch(ignoreMissing);
    if (real === null) return null;
    if (parents.has(real)) {
      log.warn({ path: escapeName(bytesOf(rel)) }, 'skipping symlink that loops back to a parent folder');
      return null;
    }
    const chain = new Set(parents).add(real);
    return { abs, rel, type: 'dir', stats, chain, mark: fingerprints?.folder(rel) ?? null };
  }

  /** A file the mode bits refuse this process: ACLs and capabilities may still allow it (access(2)). */
  async function readable(abs: ByteString, rel: ByteString, stats: Stats): Promise<Visit | null> {
    const refused = await access(bytesOf(abs), constants.R_OK).then(ignoreMissing, codeOf);
    if (refused) {
      if (refused !== 'ENOENT') skip(rel, `cannot be read (${refused})`);
      return null;
    }
    return { abs, rel, type: 'file', stats };
  }

  while (stack.length > 0) {
    if (pacer.due()) await pacer.rest();
    const frame = stack[stack.length - 1] as Frame;
    let visit: Visit | null;
    const waiting = frame.deferred[frame.deferred.length - 1];
    if (waiting && waiting.until === frame.next) {
      frame.deferred.pop();
      visit = waiting.visit;
    } else if (frame.next < frame.names.length) {
      if (frame.next >= frame.batchStart + frame.ready.length) {
        frame.batchStart = frame.next;
        frame.ready = statBatch(
          frame.abs,
          frame.names.slice(frame.next, frame.next + STAT_BATCH),
          frame.kinds,
          frame.next,
        );
      }
      const at = frame.next;
      frame.next += 1;
      const resolved = resolve(frame, frame.ready[at - frame.batchStart] as Child);
      visit = resolved instanceof Promise ? await resolved : resolved;
      if (visit?.type === 'dir') {
        const until = runEnd(frame.names, at);
        if (until > frame.next) {
          frame.deferred.push({ visit, until });
          continue;
        }
      }
    } else {
      stack.pop();
      if (frame.mark) fingerprints?.close(frame.mark);
      continue;
    }
    if (!visit) continue;
    const { rel } = visit;
    if (visit.type === 'dir') {
      const listed = await listingOf(visit.abs, frame);
      if (listed === null) {
        if (visit.mark) fingerprints?.drop(visit.mark);
        continue;
      }
      const entry = entryOf(rel, 'dir', visit.stats);
      const outcome = (yield entry) ?? 'archived'; // yielded whether or not fingerprints are asked for
      fingerprints?.entry(rel, entry, outcome, frame.mark);
      if (typeof listed === 'string') {
        skip(rel, `folder cannot be read (${listed}); kept empty`);
        if (visit.mark) fingerprints?.close(visit.mark);
        continue;
      }
      const child = frameOf(visit.abs, rel, listed, visit.chain ?? null, visit.mark ?? null);
      stack.push(child);
      listAhead(child);
      continue;
    }
    const entry: WalkEntry =
      visit.type === 'symlink'
        ? { ...entryOf(rel, 'symlink', visit.stats), linkTarget: visit.linkTarget }
        : entryOf(rel, 'file', visit.stats);
    const outcome = (yield entry) ?? 'archived'; // yielded whether or not fingerprints are asked for
    fingerprints?.entry(rel, entry, outcome, frame.mark);
  }
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
      for (const { name, stats } of statBatch(current, names.slice(i, i + STAT_BATCH))) {
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
