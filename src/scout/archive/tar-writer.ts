import { closeSync, fstatSync, lstatSync, openSync, statSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { logger } from '../../core/log.ts';
import type { WalkEntry } from '../jobs/walk.ts';

const log = logger.child({ mod: 'scout/tar' });
const BLOCK = 512;
const MAX_OCTAL_SIZE = 0o77777777777;
/** The biggest uid/gid the 8-byte octal header fields hold; bigger ones go in pax records. */
const MAX_OCTAL_ID = 0o7777777;

export interface TarEvents {
  /** A file changed or vanished while it was archived; the archive stays valid. */
  onWarning?: (path: string, message: string) => void;
}

function octal(value: number, width: number): string {
  return `${Math.max(0, Math.floor(value))
    .toString(8)
    .padStart(width - 1, '0')}\0`;
}

/** One pax record: "<len> <key>=<value>\n", where len counts the whole record. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  length += String(length).length;
  if (String(length).length !== String(length - String(length).length).length) length += 1;
  return `${length}${body}`;
}

function header(fields: {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  type: string;
  linkname?: string;
  prefix?: string;
}): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(fields.name, 0, 100, 'utf8');
  block.write(octal(fields.mode & 0o7777, 8), 100, 8, 'ascii');
  block.write(octal(Math.min(fields.uid, MAX_OCTAL_ID), 8), 108, 8, 'ascii');
  block.write(octal(Math.min(fields.gid, MAX_OCTAL_ID), 8), 116, 8, 'ascii');
  block.write(octal(Math.min(fields.size, MAX_OCTAL_SIZE), 12), 124, 12, 'ascii');
  block.write(octal(fields.mtime, 12), 136, 12, 'ascii');
  block.write('        ', 148, 8, 'ascii');
  block.write(fields.type, 156, 1, 'ascii');
  if (fields.linkname) block.write(fields.linkname, 157, 100, 'utf8');
  block.write('ustar\u000000', 257, 8, 'ascii');
  if (fields.prefix) block.write(fields.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += block[i] as number;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

const ZEROS = Buffer.alloc(1024 * 1024);
const padding = (size: number) => ZEROS.subarray(0, (BLOCK - (size % BLOCK)) % BLOCK);
const isAscii = (text: string) => /^[\x20-\x7e]*$/.test(text);

/**
 * The header blocks of one entry: a pax extended header ('x') first when the path or link
 * target does not fit ustar's fields, is not plain ASCII, the size exceeds 8 GiB or the
 * owner's uid/gid exceeds 2,097,151. Owners are numeric (no user or group names).
 */
function entryHeaders(entry: {
  path: string;
  type: '0' | '2' | '5';
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtimeMs: number;
  linkname?: string;
}): Buffer[] {
  const name = entry.type === '5' ? `${entry.path}/` : entry.path;
  const records: string[] = [];
  let ustarName = name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100 || !isAscii(name)) {
    const cut = name.lastIndexOf('/', name.length - 2);
    const head = cut > 0 ? name.slice(0, cut) : '';
    const tail = cut > 0 ? name.slice(cut + 1) : name;
    if (isAscii(name) && cut > 0 && Buffer.byteLength(head) <= 155 && Buffer.byteLength(tail) <= 100) {
      prefix = head;
      ustarName = tail;
    } else {
      records.push(paxRecord('path', name));
      ustarName = name.slice(0, 99).replace(/[^\x20-\x7e]/g, '_');
    }
  }
  let linkname = entry.linkname ?? '';
  if (linkname && (Buffer.byteLength(linkname) > 100 || !isAscii(linkname))) {
    records.push(paxRecord('linkpath', linkname));
    linkname = linkname.slice(0, 99).replace(/[^\x20-\x7e]/g, '_');
  }
  if (entry.size > MAX_OCTAL_SIZE) records.push(paxRecord('size', String(entry.size)));
  if (entry.uid > MAX_OCTAL_ID) records.push(paxRecord('uid', String(entry.uid)));
  if (entry.gid > MAX_OCTAL_ID) records.push(paxRecord('gid', String(entry.gid)));
  records.push(paxRecord('mtime', (entry.mtimeMs / 1000).toFixed(6).replace(/\.?0+$/, '')));
  const blocks: Buffer[] = [];
  const pax = Buffer.from(records.join(''), 'utf8');
  blocks.push(
    header({
      name: `PaxHeaders/${ustarName.replace(/\/$/, '').split('/').pop() ?? 'entry'}`.slice(0, 99),
      mode: 0o644,
      uid: 0,
      gid: 0,
      size: pax.length,
      mtime: entry.mtimeMs / 1000,
      type: 'x',
    }),
    pax,
    padding(pax.length),
  );
  blocks.push(
    header({
      name: ustarName,
      prefix,
      mode: entry.mode,
      uid: entry.uid,
      gid: entry.gid,
      size: entry.type === '0' ? entry.size : 0,
      mtime: entry.mtimeMs / 1000,
      type: entry.type,
      linkname,
    }),
  );
  return blocks;
}

/** Where the tar stream goes: headers are copied in, file data is read straight into it. */
export interface TarSink {
  put(bytes: Buffer): Promise<void>;
  /** Reads up to `length` bytes of `fd` at `position` into the stream; 0 at the file's end. */
  readFrom(fd: number, position: number, length: number): Promise<number>;
}

/**
 * A POSIX (pax) tar stream of the entries into `sink`, one file at a time, so memory stays
 * flat whatever the file sizes. Size, mode and mtime come from the open file itself: a file
 * that shrinks while read is padded with zeros (as GNU tar does) and one that grows is cut at
 * its size when opened, so the archive is always valid; a file that vanished or cannot be
 * opened is left out with a warning.
 */
export async function writeTar(
  root: string,
  entries: WalkEntry[],
  sink: TarSink,
  options: TarEvents & { signal?: AbortSignal; followSymlinks?: boolean } = {},
): Promise<void> {
  const warn = (path: string, message: string) => {
    log.warn({ path }, message);
    options.onWarning?.(path, message);
  };
  const putAll = async (blocks: Buffer[]) => {
    for (const block of blocks) await sink.put(block);
  };
  for (const entry of entries) {
    options.signal?.throwIfAborted();
    const absolute = join(root, entry.path);
    if (entry.type === 'dir') {
      const owner =
        (options.followSymlinks ? statSync : lstatSync)(absolute, { throwIfNoEntry: false }) ?? null;
      await putAll(
        entryHeaders({ ...entry, type: '5', uid: owner?.uid ?? 0, gid: owner?.gid ?? 0, size: 0 }),
      );
      continue;
    }
    if (entry.type === 'symlink') {
      const target = entry.linkTarget ?? (await readlink(absolute).catch(() => null));
      if (target === null) {
        warn(entry.path, 'symlink vanished while archiving; left out');
        continue;
      }
      const owner = lstatSync(absolute, { throwIfNoEntry: false }) ?? null;
      await putAll(
        entryHeaders({
          ...entry,
          type: '2',
          uid: owner?.uid ?? 0,
          gid: owner?.gid ?? 0,
          size: 0,
          linkname: target,
        }),
      );
      continue;
    }
    // Synchronous file calls: each is a short syscall, and their async forms cost a thread-pool
    // round trip apiece — for thousands of small files that latency dominated the archive time.
    // Compression and encryption run on other threads meanwhile (zstd-workers.ts).
    let fd: number;
    try {
      fd = openSync(absolute, 'r');
    } catch (error) {
      warn(entry.path, `cannot open (${(error as NodeJS.ErrnoException).code}); left out`);
      continue;
    }
    try {
      const stats = fstatSync(fd);
      const size = stats.size;
      await putAll(
        entryHeaders({
          path: entry.path,
          type: '0',
          mode: stats.mode,
          uid: stats.uid,
          gid: stats.gid,
          size,
          mtimeMs: stats.mtimeMs,
        }),
      );
      let done = 0;
      while (done < size) {
        options.signal?.throwIfAborted();
        const bytesRead = await sink.readFrom(fd, done, size - done);
        if (bytesRead === 0) {
          warn(entry.path, `file shrank by ${size - done} bytes while archiving; padded with zeros`);
          for (let left = size - done; left > 0; left -= ZEROS.length) {
            await sink.put(ZEROS.subarray(0, Math.min(left, ZEROS.length)));
          }
          done = size;
          break;
        }
        done += bytesRead;
      }
      await sink.put(padding(size));
    } finally {
      closeSync(fd);
    }
  }
  await sink.put(ZEROS.subarray(0, BLOCK * 2));
}
