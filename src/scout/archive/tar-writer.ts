import { isUtf8 } from 'node:buffer';
import { closeSync, constants, fstatSync, lstatSync, openSync, statSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { logger } from '../../core/log.ts';
import { escapeName } from '../../shared/byte-names.ts';
import { byteString } from '../jobs/byte-order.ts';
import { type EntryOutcome, fillStats, type SkippedEntry, type WalkEntry } from '../jobs/walk.ts';
import { paxAsciiRecord, paxRecord } from './pax-record.ts';
import { xattrRecords } from './xattr-records.ts';
import type { Xattr, XattrLookup } from './xattr-scan.ts';

const log = logger.child({ mod: 'scout/tar' });
const BLOCK = 512;
const MAX_OCTAL_SIZE = 0o77777777777;
/** The biggest uid/gid the 8-byte octal header fields hold; bigger ones go in pax records. */
const MAX_OCTAL_ID = 0o7777777;

/** An entry left out of the archive, or (`inArchive`) archived with zeros for data it could not read. */
export interface ArchiveSkip extends SkippedEntry {
  inArchive: boolean;
}

export interface TarEvents {
  /** An entry that is not in the archive as it was scanned; the archive stays valid. */
  onSkip?: (skipped: ArchiveSkip) => void;
}

/** `value` as `width - 1` octal digits and a NUL, at `at` (a ustar numeric field). */
function putOctal(block: Buffer, at: number, width: number, value: number): void {
  let rest = Math.max(0, Math.floor(value));
  block[at + width - 1] = 0;
  for (let i = at + width - 2; i >= at; i -= 1) {
    block[i] = 0x30 + (rest % 8);
    rest = Math.floor(rest / 8);
  }
}

const USTAR_MAGIC = Buffer.from('ustar\u000000', 'latin1');
const TYPEFLAG = { '0': 0x30, '1': 0x31, '2': 0x32, '5': 0x35, x: 0x78 } as const;

/**
 * A ustar header written over `block` (512 bytes, reused for every entry: no allocation and no
 * string per field, which cost more than the file's own system calls for small files); of
 * `name` and `linkname` the first 100 bytes, of `prefix` 155.
 */
function putHeader(
  block: Buffer,
  fields: {
    name: Buffer;
    mode: number;
    uid: number;
    gid: number;
    size: number;
    mtime: number;
    type: keyof typeof TYPEFLAG;
    linkname?: Buffer;
    prefix?: Buffer;
  },
): Buffer {
  block.fill(0);
  fields.name.copy(block, 0, 0, 100);
  putOctal(block, 100, 8, fields.mode & 0o7777);
  putOctal(block, 108, 8, Math.min(fields.uid, MAX_OCTAL_ID));
  putOctal(block, 116, 8, Math.min(fields.gid, MAX_OCTAL_ID));
  putOctal(block, 124, 12, Math.min(fields.size, MAX_OCTAL_SIZE));
  putOctal(block, 136, 12, fields.mtime);
  block.fill(0x20, 148, 156);
  block[156] = TYPEFLAG[fields.type];
  fields.linkname?.copy(block, 157, 0, 100);
  USTAR_MAGIC.copy(block, 257);
  fields.prefix?.copy(block, 345, 0, 155);
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += block[i] as number;
  putOctal(block, 148, 7, sum);
  block[155] = 0x20;
  return block;
}

const ZEROS = Buffer.alloc(1024 * 1024);
const padding = (size: number) => ZEROS.subarray(0, (BLOCK - (size % BLOCK)) % BLOCK);
const SLASH = 0x2f;

/** True when every byte is printable ASCII, the only names a ustar field holds unambiguously. */
function isPlainAscii(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i] as number;
    if (byte < 0x20 || byte > 0x7e) return false;
  }
  return true;
}

/** The first 99 bytes with every byte that is not printable ASCII made '_': a ustar field's stand-in. */
function standIn(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes.subarray(0, 99));
  for (let i = 0; i < out.length; i += 1) {
    const byte = out[i] as number;
    if (byte < 0x20 || byte > 0x7e) out[i] = 0x5f;
  }
  return out;
}

/** A pax mtime: seconds with up to 6 decimals, trailing zeros (and a bare point) dropped. */
function paxTime(mtimeMs: number): string {
  const fixed = (mtimeMs / 1000).toFixed(6);
  let end = fixed.length;
  while (fixed.charCodeAt(end - 1) === 0x30) end -= 1;
  if (fixed.charCodeAt(end - 1) === 0x2e) end -= 1;
  return fixed.slice(0, end);
}

/**
 * Room for one entry's headers, made once per tar stream and reused for each entry: the pax
 * header, its records when they fit one block, and the entry's own header, contiguous (`all`),
 * and room for the pax header's name.
 */
function headerScratch() {
  const all = Buffer.alloc(3 * BLOCK + 100);
  return {
    all: all.subarray(0, 3 * BLOCK),
    paxHeader: all.subarray(0, BLOCK),
    paxBlock: all.subarray(BLOCK, 2 * BLOCK),
    own: all.subarray(2 * BLOCK, 3 * BLOCK),
    paxName: all.subarray(3 * BLOCK),
  };
}

/**
 * The header blocks of one entry: a pax extended header ('x') first with the mtime, and the
 * exact bytes of the path or link target when they do not fit ustar's fields or are not plain
 * ASCII, the size when it exceeds 8 GiB, the owner's uid/gid when they exceed 2,097,151.
 * Owners are numeric (no user or group names). A path or link target whose bytes are not
 * UTF-8 adds `hdrcharset=BINARY` (as libarchive writes): bsdtar then restores the bytes
 * without trying to convert them, and GNU tar, which restores them as they are anyway, says
 * it ignores the keyword.
 * They are written over `scratch` (headerScratch) and answered as the pieces to put, in
 * order, before the next entry's headers are made.
 */
function entryHeaders(
  entry: {
    path: Buffer;
    type: '0' | '1' | '2' | '5';
    mode: number;
    uid: number;
    gid: number;
    size: number;
    mtimeMs: number;
    linkname?: Buffer;
    /** Extended attributes and ACLs (xattr-records.ts). */
    xattrs?: readonly Xattr[];
  },
  scratch: ReturnType<typeof headerScratch>,
): Buffer[] {
  const name = entry.type === '5' ? Buffer.concat([entry.path, Buffer.of(SLASH)]) : entry.path;
  const records: Buffer[] = [];
  let binary = false;
  let ustarName = name;
  let prefix: Buffer | undefined;
  if (name.length > 100 || !isPlainAscii(name)) {
    const cut = name.lastIndexOf(SLASH, name.length - 2);
    if (isPlainAscii(name) && cut > 0 && cut <= 155 && name.length - cut - 1 <= 100) {
      prefix = name.subarray(0, cut);
      ustarName = name.subarray(cut + 1);
    } else {
      records.push(paxRecord('path', name));
      binary ||= !isUtf8(name);
      ustarName = standIn(name);
    }
  }
  let linkname = entry.linkname;
  if (linkname && (linkname.length > 100 || !isPlainAscii(linkname))) {
    records.push(paxRecord('linkpath', linkname));
    binary ||= !isUtf8(linkname);
    linkname = standIn(linkname);
  }
  if (binary) records.unshift(paxRecord('hdrcharset', 'BINARY'));
  if (entry.size > MAX_OCTAL_SIZE) records.push(paxRecord('size', String(entry.size)));
  if (entry.uid > MAX_OCTAL_ID) records.push(paxRecord('uid', String(entry.uid)));
  if (entry.gid > MAX_OCTAL_ID) records.push(paxRecord('gid', String(entry.gid)));
  if (entry.xattrs) records.push(...xattrRecords(entry.xattrs));
  const mtime = paxAsciiRecord('mtime', paxTime(entry.mtimeMs));
  let paxLength = mtime.length;
  for (const record of records) paxLength += record.length;
  const { paxHeader, paxBlock, own } = scratch;
  const base = ustarName[ustarName.length - 1] === SLASH ? ustarName.subarray(0, -1) : ustarName;
  const last = base.subarray(base.lastIndexOf(SLASH) + 1);
  putHeader(paxHeader, {
    name: paxHeaderName(last, scratch.paxName),
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: paxLength,
    mtime: entry.mtimeMs / 1000,
    type: 'x',
  });
  putHeader(own, {
    name: ustarName,
    prefix,
    mode: entry.mode,
    uid: entry.uid,
    gid: entry.gid,
    size: entry.type === '0' ? entry.size : 0,
    mtime: entry.mtimeMs / 1000,
    type: entry.type,
    linkname,
  });
  if (paxLength > BLOCK) {
    const pax = Buffer.concat([...records, Buffer.from(mtime, 'latin1')]);
    return [paxHeader, pax, padding(pax.length), own];
  }
  // The records fit one block (nearly always: the mtime alone): the three blocks go as one.
  paxBlock.fill(0);
  let at = 0;
  for (const record of records) at += record.copy(paxBlock, at);
  paxBlock.write(mtime, at, 'latin1');
  return [scratch.all];
}

/** "PaxHeaders/<last name>", cut to 99 bytes, written into `room` (at least 99 bytes). */
function paxHeaderName(last: Buffer, room: Buffer): Buffer {
  const length = PAX_HEADERS.copy(room, 0);
  return room.subarray(0, length + last.copy(room, length, 0, 99 - length));
}

const PAX_HEADERS = Buffer.from('PaxHeaders/');

/** A read of a file being archived failed (as opposed to the stream behind the sink). */
export class SourceReadError extends Error {
  readonly code: string;
  constructor(cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EIO';
    super(`read failed (${code})`, { cause });
    this.code = code;
  }
}

/**
 * Where the tar stream goes: headers are copied in, file data is read straight into it. Both
 * answer a promise only when the stream must be waited for (a full block handed on), so an
 * entry that fits costs no turn of the event loop.
 */
export interface TarSink {
  put(bytes: Buffer): Promise<void> | undefined;
  /** Reads up to `length` bytes of `fd` at `position` into the stream; 0 at the file's end; a failed read throws SourceReadError. */
  readFrom(fd: number, position: number, length: number): number | Promise<number>;
}

/** Opening a file to archive: never through a symlink swapped in since the scan, never waiting on a FIFO. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const OPEN_FOLLOWING = constants.O_RDONLY | constants.O_NONBLOCK;

/** Why an open failed, in words. */
function openFailure(code: string | undefined): string {
  if (code === 'ENOENT') return 'vanished since the scan';
  if (code === 'ELOOP') return 'replaced by a symlink since the scan';
  return `cannot be opened (${code ?? 'error'})`;
}

/**
 * A POSIX (pax) tar stream of the entries into `sink`, one file at a time, so memory stays
 * flat whatever the file sizes. Size, mode and mtime come from the open file itself, and that
 * file must be the one the scan saw (same device and inode, opened without following a
 * symlink: a file swapped for a link to another one between the scan and the read is left
 * out, not read through the link); a file the walk left unexamined (its
 * `filesExaminedByOpener`) must be a regular file opened that way, and its fstat is what the
 * walk's fingerprints count. A file that grows while read is cut at its size when
 * opened. A file that vanished or cannot be opened is left out; one that cannot be read to
 * its end (it shrank, or a read failed) keeps its header, since the stream cannot take it
 * back, and the rest of its data is zeros, so the archive stays valid. Both are reported
 * through `onSkip` (with `inArchive` telling which), so neither counts in the fingerprint
 * and the next backup tries them again. The names of a file with several (hard links) after
 * the first archived one are link entries (typeflag '1') to it, as GNU tar and bsdtar write.
 * `entries` may be the walk itself (walkJob): each entry is written as it comes, and its
 * outcome is handed back to the walk's `next`, so a job of any size streams through.
 */
export async function writeTar(
  root: string,
  entries: Iterable<WalkEntry> | AsyncIterable<WalkEntry>,
  sink: TarSink,
  options: TarEvents & {
    signal?: AbortSignal;
    followSymlinks?: boolean;
    /** Extended attributes by path (xattr-scan.ts); none when absent. */
    xattrs?: XattrLookup;
  } = {},
): Promise<void> {
  const skip = (path: Buffer, reason: string, inArchive: boolean): EntryOutcome => {
    log.warn(
      { path: escapeName(path), reason },
      inArchive ? 'archived incomplete' : 'left out of the snapshot',
    );
    options.onSkip?.({ path, reason, inArchive });
    return inArchive ? 'incomplete' : 'left_out';
  };
  /** Puts the blocks in order; a promise only when the stream must be waited for. */
  const putAll = (blocks: Buffer[], from = 0): Promise<void> | undefined => {
    for (let i = from; i < blocks.length; i += 1) {
      const wait = sink.put(blocks[i] as Buffer);
      if (wait) return wait.then(() => putAll(blocks, i + 1));
    }
    return undefined;
  };
  const scratch = headerScratch();
  const putHeaders = (entry: Parameters<typeof entryHeaders>[0]) => putAll(entryHeaders(entry, scratch));
  const rootBytes = Buffer.from(`${root.replace(/\/+$/, '')}/`, 'utf8');
  const openFlags = options.followSymlinks ? OPEN_FOLLOWING : OPEN_FLAGS;
  /** The first archived name of each file with several, by "dev:ino". */
  const links = new Map<string, { path: Buffer; incomplete: boolean }>();
  const lookup = options.xattrs instanceof Map && options.xattrs.size === 0 ? null : (options.xattrs ?? null);

  /** The key of a file with several names ("dev:ino"); null for a file with one. */
  const linkKey = (entry: WalkEntry) =>
    entry.nlink !== undefined && entry.nlink > 1 ? `${entry.dev}:${entry.ino}` : null;

  /**
   * A second (third, …) name of a file already archived: a hard link entry to the first name,
   * as tar writes it, told from the device, inode and link count (the walk's, or the opener's).
   * Undefined for any other file.
   */
  function linkEntry(entry: WalkEntry): Promise<EntryOutcome> | undefined {
    const inode = linkKey(entry);
    const first = inode === null ? undefined : links.get(inode);
    if (first === undefined) return undefined;
    const outcome = (): EntryOutcome =>
      first.incomplete
        ? skip(entry.path, `a hard link to ${escapeName(first.path)}, archived incomplete`, true)
        : 'archived';
    const headed = putHeaders({
      ...entry,
      type: '1',
      uid: entry.uid ?? 0,
      gid: entry.gid ?? 0,
      size: 0,
      linkname: first.path,
    });
    return headed ? headed.then(outcome) : Promise.resolve(outcome());
  }

  /** Writes one entry; answers what became of it (the walk counts it in its fingerprints). */
  async function writeEntry(entry: WalkEntry): Promise<EntryOutcome> {
    options.signal?.throwIfAborted();
    const absolute = Buffer.concat([rootBytes, entry.path]);
    const listed = lookup?.get(byteString(entry.path));
    const xattrs = listed instanceof Promise ? await listed : listed;
    if (entry.type === 'dir') {
      const owner =
        entry.uid !== undefined
          ? entry
          : ((options.followSymlinks ? statSync : lstatSync)(absolute, { throwIfNoEntry: false }) ?? null);
      const headed = putHeaders({
        ...entry,
        type: '5',
        uid: owner?.uid ?? 0,
        gid: owner?.gid ?? 0,
        size: 0,
        xattrs,
      });
      if (headed) await headed;
      return 'archived';
    }
    if (entry.type === 'symlink') {
      const target = entry.linkTarget ?? (await readlink(absolute, { encoding: 'buffer' }).catch(() => null));
      if (target === null) return skip(entry.path, 'vanished since the scan', false);
      const owner =
        entry.uid !== undefined ? entry : (lstatSync(absolute, { throwIfNoEntry: false }) ?? null);
      const headed = putHeaders({
        ...entry,
        type: '2',
        uid: owner?.uid ?? 0,
        gid: owner?.gid ?? 0,
        size: 0,
        linkname: target,
        xattrs,
      });
      if (headed) await headed;
      return 'archived';
    }
    // A file the walk examined: a second name of one archived is told before opening it.
    const examined = entry.ino !== undefined;
    if (examined) {
      const linked = linkEntry(entry);
      if (linked) return linked;
    }
    // Synchronous file calls: each is a short syscall, and their async forms cost a thread-pool
    // round trip apiece — for thousands of small files that latency dominated the archive time.
    // Compression and encryption run on other threads meanwhile (zstd-workers.ts).
    let fd: number;
    try {
      fd = openSync(absolute, openFlags);
    } catch (error) {
      return skip(entry.path, openFailure((error as NodeJS.ErrnoException).code), false);
    }
    try {
      const stats = fstatSync(fd);
      const swapped = !stats.isFile() || (examined && (stats.ino !== entry.ino || stats.dev !== entry.dev));
      if (swapped) return skip(entry.path, 'replaced by another file since the scan', false);
      if (!examined) {
        // Left to this opener by the walk (filesExaminedByOpener): what it counts is this fstat.
        fillStats(entry, stats);
        const linked = linkEntry(entry);
        if (linked) return linked;
      }
      const inode = linkKey(entry);
      const size = stats.size;
      const headed = putHeaders({
        path: entry.path,
        type: '0',
        mode: stats.mode,
        uid: stats.uid,
        gid: stats.gid,
        size,
        mtimeMs: stats.mtimeMs,
        xattrs,
      });
      if (headed) await headed;
      let done = 0;
      let failure: string | null = null;
      while (done < size) {
        options.signal?.throwIfAborted();
        let bytesRead: number;
        try {
          const read = sink.readFrom(fd, done, size - done);
          bytesRead = typeof read === 'number' ? read : await read;
        } catch (error) {
          if (!(error instanceof SourceReadError)) throw error;
          failure = `read failed (${error.code}) after ${done} of ${size} bytes; the rest is zeros`;
          break;
        }
        if (bytesRead === 0) {
          failure = `shrank by ${size - done} bytes while archived; the rest is zeros`;
          break;
        }
        done += bytesRead;
      }
      if (inode !== null) links.set(inode, { path: entry.path, incomplete: failure !== null });
      let outcome: EntryOutcome = 'archived';
      if (failure !== null) {
        outcome = skip(entry.path, failure, true);
        for (let left = size - done; left > 0; left -= ZEROS.length) {
          await sink.put(ZEROS.subarray(0, Math.min(left, ZEROS.length)));
        }
      }
      const padded = sink.put(padding(size));
      if (padded) await padded;
      return outcome;
    } finally {
      closeSync(fd);
    }
  }

  // Each entry's outcome goes back to its source (`next(outcome)`): the walk counts it.
  const source =
    Symbol.asyncIterator in entries ? entries[Symbol.asyncIterator]() : entries[Symbol.iterator]();
  try {
    let step = await source.next();
    while (!step.done) step = await source.next(await writeEntry(step.value));
  } catch (error) {
    await source.return?.();
    throw error;
  }
  await sink.put(ZEROS.subarray(0, BLOCK * 2));
}
