import type { Readable } from 'node:stream';
import { releaseNow } from '../../core/release-memory.ts';
import { ByteQueue } from './byte-queue.ts';

const BLOCK = 512;
/** An entry's data up to this size, already read in, is handed over whole (see `readTar`). */
const WHOLE_MAX = 256 * 1024;
/** An entry's data up to this size is handed over whole even when not all read in yet. */
const FILLED_MAX = 64 * 1024;
/** Pax and GNU long-name headers for one entry together; real ones hold a few paths. */
const MAX_METADATA = 1024 * 1024;
/** Input buffers at least this big are freed once read, with `freeInput` (below: maybe Node's shared pool). */
const FREED_MIN = 64 * 1024;
/**
 * Input buffers read to their end and waiting to be freed at the next header, at most: with
 * `freeInput`, a big entry's older ones are freed as it is read, so the reader holds no more
 * than these whatever a file's size. A handler may therefore keep at most this many minus one
 * of an entry's pieces at once (new-files.ts writes 4 at a time on the thread pool).
 */
export const FREED_HELD = 8;

export interface TarEntry {
  /** The entry's name as the archive holds it: bytes (pax records and headers are bytes, not text). */
  path: Buffer;
  /** '0' file, '1' hard link, '2' symlink, '5' folder; anything else is reported as is. */
  type: string;
  mode: number;
  mtimeMs: number;
  size: number;
  /** A symlink's target or a hard link's target entry, as bytes. */
  linkname: Buffer;
  /** The owner's numeric ids (pax `uid`/`gid` when present, else the header fields). */
  uid: number;
  gid: number;
  /** Extended attributes (pax `SCHILY.xattr.<name>` records, as GNU tar `--xattrs` writes): name → value. */
  xattrs: Xattr[];
}

export interface Xattr {
  name: Buffer;
  value: Buffer;
}

export class TarError extends Error {
  override name = 'TarError';
}

/** A NUL-terminated header field's bytes (found by a plain loop: `indexOf` is a native call). */
function field(block: Buffer, offset: number, length: number): Buffer {
  const stop = offset + length;
  let end = offset;
  while (end < stop && block[end] !== 0) end += 1;
  return block.subarray(offset, end);
}

/** An empty field's copy: one for all entries (a file's link name, most of all). */
const NONE = Buffer.alloc(0);

function text(block: Buffer, offset: number, length: number): string {
  return field(block, offset, length).toString('latin1');
}

/** A name from a header field, copied out of the block (which may be a view of a bigger chunk). */
function name(block: Buffer, offset: number, length: number): Buffer {
  const bytes = field(block, offset, length);
  return bytes.length === 0 ? NONE : Buffer.from(bytes);
}

function number(block: Buffer, offset: number, length: number): number {
  const field = block.subarray(offset, offset + length);
  if ((field[0] ?? 0) & 0x80) {
    // GNU base-256 for big values.
    let value = 0;
    for (let i = 1; i < length; i += 1) value = value * 256 + (field[i] ?? 0);
    return value;
  }
  // Octal digits after optional spaces, up to a NUL, space or the field's end (read from the
  // bytes: no string per field); none is 0, as an empty field; anything else is NaN.
  const end = offset + length;
  let at = offset;
  while (at < end && (block[at] === 0x20 || block[at] === 0x09)) at += 1;
  let value = 0;
  const from = at;
  for (; at < end; at += 1) {
    const digit = (block[at] as number) - 0x30;
    if (digit < 0 || digit > 7) break;
    value = value * 8 + digit;
  }
  if (at > from || at === end) return value;
  const stop = block[at];
  return stop === 0 || stop === 0x20 ? 0 : Number.NaN;
}

/** The header's size field: octal digits (or GNU base-256), never negative or garbage. */
function sizeField(block: Buffer): number {
  const plain = plainOctal(block, 124, 12);
  if (plain >= 0) return plain;
  const field = block.subarray(124, 136);
  const first = field[0] ?? 0;
  if (first & 0x80) {
    if (first & 0x40) throw new TarError('damaged tar header: negative entry size');
    let value = first & 0x3f;
    for (let i = 1; i < field.length; i += 1) value = value * 256 + (field[i] ?? 0);
    if (!Number.isSafeInteger(value)) throw new TarError('damaged tar header: entry size too large');
    return value;
  }
  const digits = text(block, 124, 12).trim();
  if (digits === '') return 0;
  if (!/^[0-7]+$/.test(digits)) {
    throw new TarError(`damaged tar header: entry size ${JSON.stringify(digits)} is not an octal number`);
  }
  return Number.parseInt(digits, 8);
}

/**
 * A field of octal digits between optional spaces, ended by a NUL or the field's end, read
 * from the bytes (what tar writers put there; no string per header); -1 for anything else
 * (an empty field, GNU base-256, garbage), which `sizeField` then reads the long way.
 */
function plainOctal(block: Buffer, offset: number, length: number): number {
  const end = offset + length;
  let at = offset;
  while (at < end && block[at] === 0x20) at += 1;
  const from = at;
  let value = 0;
  for (; at < end; at += 1) {
    const digit = (block[at] as number) - 0x30;
    if (digit < 0 || digit > 7) break;
    value = value * 8 + digit;
  }
  if (at === from) return -1;
  while (at < end && block[at] === 0x20) at += 1;
  return at === end || block[at] === 0 ? value : -1;
}

/** A pax `size` record: a whole number of bytes. */
function paxSize(value: string): number {
  const size = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(size)) {
    throw new TarError(
      `damaged pax header: size ${JSON.stringify(value.slice(0, 40))} is not a whole number`,
    );
  }
  return size;
}

const XATTR = 'SCHILY.xattr.';

/**
 * A pax header's records, keyword → value bytes (values such as `path` and xattrs are bytes in
 * whatever encoding; `hdrcharset=BINARY` only says so). Keywords are read byte for byte (latin1).
 */
function parsePax(data: Buffer, records: Map<string, Buffer>): void {
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(data.subarray(at, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0 || at + length > data.length) {
      throw new TarError('malformed pax header');
    }
    const record = data.subarray(space + 1, at + length - 1);
    const eq = record.indexOf(0x3d);
    if (eq > 0) records.set(record.subarray(0, eq).toString('latin1'), Buffer.from(record.subarray(eq + 1)));
    at += length;
  }
}

/** An xattr name from its pax keyword: GNU tar writes `=` as `%3D` and `%` as `%25` there. */
function xattrName(keyword: string): Buffer {
  const decoded = keyword
    .slice(XATTR.length)
    .replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(decoded, 'latin1');
}

/** A pax text value (numbers, keywords). */
const paxText = (records: Map<string, Buffer>, key: string) => records.get(key)?.toString('latin1');

function withoutTrailingNuls(bytes: Buffer): Buffer {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  return Buffer.from(bytes.subarray(0, end));
}

function checksumOk(block: Buffer): boolean {
  // Every byte, with the checksum field itself counted as spaces.
  let sum = 8 * 0x20;
  if ((block.byteOffset & 3) === 0) {
    // Four bytes at a time (two a time per 16-bit lane: at most 128 * 255 per lane, no carry
    // between lanes), then the checksum field's own bytes taken out again: a header costs half.
    const words = new Uint32Array(block.buffer, block.byteOffset, BLOCK / 4);
    let even = 0;
    let odd = 0;
    for (let i = 0; i < BLOCK / 4; i += 1) {
      const word = words[i] as number;
      even += word & 0x00ff00ff;
      odd += (word >>> 8) & 0x00ff00ff;
    }
    sum += (even & 0xffff) + (even >>> 16) + (odd & 0xffff) + (odd >>> 16);
    for (let i = 148; i < 156; i += 1) sum -= block[i] as number;
  } else {
    for (let i = 0; i < 148; i += 1) sum += block[i] as number;
    for (let i = 156; i < BLOCK; i += 1) sum += block[i] as number;
  }
  return sum === number(block, 148, 8);
}

/** Whether the header's magic starts with `ustar` (POSIX and GNU headers), read from the bytes. */
const isUstar = (block: Buffer) =>
  block[257] === 0x75 &&
  block[258] === 0x73 &&
  block[259] === 0x74 &&
  block[260] === 0x61 &&
  block[261] === 0x72;

/**
 * Reads a tar stream (POSIX pax, ustar and GNU long names) and calls `onEntry` for each
 * entry with an iterator over its data, which must be consumed (or skipped) before the next.
 * A small entry (up to 64 KiB, or up to 256 KiB when already read in: most files of a tree
 * of small files) also comes as `whole`, its data in one buffer, for a handler to use without
 * awaiting the iterator piece by piece (the iterator then yields the same buffer). Memory stays bounded by
 * the input chunks. A handler done with the entry when it returns may return nothing instead of
 * a promise (no await, no turn of the event loop for it).
 *
 * `freeInput`: the input's chunks are the reader's alone (zstd's output in snapshot-stream.ts),
 * so each big one is freed (detached) once read, between entries, instead of waiting for the
 * garbage collector — which a restore otherwise ran every 20–30 MiB, set off by these buffers
 * outside the heap. A handler must then not keep a piece after its promise settles, nor more
 * than `FREED_HELD` − 1 pieces of an entry at once: a big entry's earlier buffers are freed as
 * it is read (all of them were held until its end: a 1.5 GiB file's restore peaked at 1.6 GiB).
 */
export async function readTar(
  input: Readable,
  onEntry: (entry: TarEntry, data: AsyncGenerator<Buffer>, whole: Buffer | null) => Promise<void> | undefined,
  options: { freeInput?: boolean } = {},
): Promise<void> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  /** Chunks read to their end, to free before the next header. */
  const used: Buffer[] = [];
  const buffered = new ByteQueue(
    options.freeInput
      ? {
          onUsed: (chunk) => {
            // Only the end of a big buffer of its own: zlib fills each output buffer in order
            // and hands out slices of it, so its end means every slice of it was read. Small
            // buffers may be slices of Node's shared pool.
            const memory = chunk.buffer;
            if (memory.byteLength >= FREED_MIN && chunk.byteOffset + chunk.length === memory.byteLength) {
              if (used.length === FREED_HELD) releaseNow(used.shift() as Buffer);
              used.push(chunk);
            }
          },
        }
      : {},
  );
  let ended = false;

  async function fill(n: number): Promise<boolean> {
    while (buffered.length < n && !ended) {
      const next = await iterator.next();
      if (next.done) ended = true;
      else buffered.push(next.value);
    }
    return buffered.length >= n;
  }

  // The awaits below happen only when the bytes are not buffered yet: most headers and small
  // files are, and an await per header and piece was a good part of a small file's cost.
  async function take(n: number): Promise<Buffer> {
    if (buffered.length < n && !(await fill(n))) throw new TarError('truncated tar archive');
    return buffered.take(n);
  }

  /** Drops `n` bytes, reading no more than a chunk ahead. */
  async function skip(n: number): Promise<void> {
    let left = n;
    while (left > 0) {
      if (buffered.length === 0 && !(await fill(1))) throw new TarError('truncated tar archive');
      const drop = left < buffered.length ? left : buffered.length;
      buffered.skip(drop);
      left -= drop;
    }
  }

  /** Bytes of the current entry's data not yet read. */
  let left = 0;
  /** The current entry's whole data, taken from the buffer already, not yet yielded. */
  let whole: Buffer | null = null;

  async function* body(): AsyncGenerator<Buffer> {
    if (whole) {
      const all = whole;
      whole = null;
      yield all;
    }
    while (left > 0) {
      if (buffered.length === 0 && !(await fill(1))) throw new TarError('truncated tar archive');
      const piece = buffered.takeSome(left);
      left -= piece.length;
      yield piece;
    }
  }

  let pax = new Map<string, Buffer>();
  let longName: Buffer | null = null;
  let longLink: Buffer | null = null;
  /** Bytes of pax and long-name headers read for the coming entry. */
  let metadata = 0;
  for (;;) {
    // No handler runs and no header is in use: the chunks read to their end are free.
    for (const chunk of used.splice(0)) releaseNow(chunk);
    if (buffered.length < BLOCK && !(await fill(BLOCK))) {
      if (buffered.length === 0) return;
      throw new TarError('truncated tar archive');
    }
    const block = buffered.take(BLOCK);
    if (block.every((b) => b === 0)) return;
    if (!checksumOk(block)) throw new TarError('damaged tar header (checksum mismatch)');
    const type = String.fromCharCode(block[156] || 0x30);
    const size = sizeField(block);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
      metadata += size;
      if (metadata > MAX_METADATA) {
        throw new TarError(
          `pax or long-name headers of more than ${MAX_METADATA / 1024 / 1024} MiB for one entry; the archive is damaged or not a backupd snapshot`,
        );
      }
      const data = buffered.length >= padded ? buffered.take(padded) : await take(padded);
      const content = data.subarray(0, size);
      if (type === 'x') parsePax(content, pax);
      if (type === 'L') longName = withoutTrailingNuls(content);
      if (type === 'K') longLink = withoutTrailingNuls(content);
      continue;
    }
    const prefix = isUstar(block) ? field(block, 345, 155) : null;
    const path =
      pax.get('path') ??
      longName ??
      (prefix?.length ? Buffer.concat([prefix, Buffer.of(0x2f), field(block, 0, 100)]) : name(block, 0, 100));
    const paxSizeText = paxText(pax, 'size');
    const realSize = paxSizeText !== undefined ? paxSize(paxSizeText) : size;
    const mtime = paxText(pax, 'mtime');
    const uid = paxText(pax, 'uid');
    const gid = paxText(pax, 'gid');
    const xattrs: Xattr[] = [];
    for (const [key, value] of pax) {
      if (key.startsWith(XATTR)) xattrs.push({ name: xattrName(key), value });
    }
    const entry: TarEntry = {
      path,
      type: type === '\0' || type === '7' ? '0' : type,
      mode: number(block, 100, 8),
      mtimeMs: (mtime !== undefined ? Number(mtime) : number(block, 136, 12)) * 1000,
      size: realSize,
      linkname: pax.get('linkpath') ?? longLink ?? name(block, 157, 100),
      uid: uid !== undefined ? Number(uid) : number(block, 108, 8),
      gid: gid !== undefined ? Number(gid) : number(block, 116, 8),
      xattrs,
    };
    pax = new Map();
    longName = null;
    longLink = null;
    metadata = 0;
    left = realSize;
    // A small entry is read in whole even when it runs into the next input chunk (one await, a copy).
    if (
      realSize > 0 &&
      realSize <= WHOLE_MAX &&
      (buffered.length >= realSize || (realSize <= FILLED_MAX && (await fill(realSize))))
    ) {
      whole = buffered.take(realSize);
      left = 0;
    }
    const handled = onEntry(entry, body(), whole);
    if (handled) await handled;
    whole = null;
    // Skip what the handler did not read, then the block padding.
    const rest = left + (Math.ceil(realSize / BLOCK) * BLOCK - realSize);
    left = 0;
    if (rest > 0) {
      if (buffered.length >= rest) buffered.skip(rest);
      else await skip(rest);
    }
  }
}
