// The job fingerprint (what change detection compares and a drill reads back from a snapshot),
// computed over a list (jobFingerprint) or while the walk streams (FingerprintStream): the
// same bytes either way.
import { createHash, type Hash } from 'node:crypto';
import { type ByteString, byteString, utf8ByteString } from './byte-order.ts';
import type { WalkEntry } from './walk.ts';

/** What the fingerprint reads of an entry: its path as bytes (or as text, taken as UTF-8), type and size. */
export type FingerprintEntry = Pick<WalkEntry, 'type' | 'size'> &
  Partial<Pick<WalkEntry, 'mtimeMs'>> & { path: Uint8Array | string };

/** The record of a file or symlink (symlinks count as files of size 0). */
export function fileRecord(
  path: ByteString,
  entry: Pick<WalkEntry, 'type' | 'size'> & { mtimeMs?: number },
  mtimes: boolean,
): ByteString {
  const size = entry.type === 'file' ? entry.size : 0;
  const mtime = mtimes && entry.type === 'file' ? `\0${entry.mtimeMs ?? 0}` : '';
  return `f ${path}\0${size}${mtime}\n`;
}

/** The record of an empty folder. */
export const folderRecord = (path: ByteString): ByteString => `d ${path}\0\n`;

/**
 * Lowercase hex SHA-256 over the job's files (symlinks count as files of size 0) and empty
 * folders, sorted by the bytes of their paths. Each one adds, in that order:
 *   file or symlink:  "f " <path bytes> NUL <size in decimal> LF
 *   empty folder:     "d " <path bytes> NUL LF
 * Paths never hold NUL, so the encoding is unambiguous. A folder is empty when no other
 * entry lies under it (after exclusions). For UTF-8 paths this is the fingerprint earlier
 * versions computed over text, so stored fingerprints stay valid.
 * With `mtimes` (a job's `change_detection: mtimes`) a file's record also carries its
 * modification time, NUL <mtimeMs> before the LF: for change detection only, never the
 * fingerprint sent with a snapshot (a drill recomputes that one from the archive).
 */
export function jobFingerprint(entries: FingerprintEntry[], options: { mtimes?: boolean } = {}): string {
  const paths = entries.map((entry) =>
    typeof entry.path === 'string' ? utf8ByteString(entry.path) : byteString(entry.path),
  );
  const nonEmpty = new Set<ByteString>();
  for (const path of paths) {
    const slash = path.lastIndexOf('/');
    if (slash > 0) nonEmpty.add(path.slice(0, slash));
  }
  const records: Array<{ path: ByteString; text: ByteString }> = [];
  entries.forEach((entry, i) => {
    const path = paths[i] as ByteString;
    if (entry.type === 'dir') {
      if (!nonEmpty.has(path)) records.push({ path, text: folderRecord(path) });
    } else {
      records.push({ path, text: fileRecord(path, entry, options.mtimes === true) });
    }
  });
  records.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash('sha256');
  for (const record of records) hash.update(record.text, 'latin1');
  return hash.digest('hex');
}

/**
 * Hash states kept at once for folders not yet known to be empty (2^n for n such folders
 * open together); past that, records wait in a queue until a folder is settled.
 */
const MAX_BRANCHES = 16;

/** Record bytes gathered before they are hashed (FingerprintStream's `#pending`). */
const PENDING_BYTES = 64 * 1024;

type Item = { record: ByteString } | { folder: number; record: ByteString };

interface Branch {
  hash: Hash;
  /** Open folders this branch takes to be empty (their record is in its hash). */
  empty: Set<number>;
}

/**
 * jobFingerprint over records that arrive in sorted order, except that an empty folder's
 * record is known only later: its place is marked (`folder`) before the records that sort
 * after it, and `settle` tells later whether it was empty. Until then the hash runs in two
 * branches, one with the record and one without (SHA-256 states are copied, so nothing is
 * held); `settle` keeps the right one. Memory stays flat whatever the job's size.
 */
export class FingerprintStream {
  #branches: Branch[] = [{ hash: createHash('sha256'), empty: new Set() }];
  /** Folders open in the branches. */
  readonly #forked = new Set<number>();
  /** Settled folders whose mark still waits in the queue. */
  readonly #settled = new Map<number, boolean>();
  readonly #queue: Item[] = [];
  #nextFolder = 0;
  /**
   * Records for every branch, hashed together once they add up to PENDING_BYTES or before
   * the branches change: a hash update per record and variant was three calls into the hash
   * per file of an archive.
   */
  #pending = '';

  /** Marks the place of a folder's record; answers the folder's number for `settle`. */
  folder(path: ByteString): number {
    this.#hashPending();
    const id = this.#nextFolder++;
    this.#queue.push({ folder: id, record: folderRecord(path) });
    this.#flush();
    return id;
  }

  record(text: ByteString): void {
    if (this.#queue.length > 0) this.#queue.push({ record: text });
    else {
      this.#pending += text;
      if (this.#pending.length >= PENDING_BYTES) this.#hashPending();
    }
  }

  /** Whether folder `id` turned out empty (its record counts) or not (or is not in the job). */
  settle(id: number, empty: boolean): void {
    this.#hashPending();
    if (this.#forked.delete(id)) {
      this.#branches = this.#branches.filter((branch) => branch.empty.delete(id) === empty);
    } else {
      this.#settled.set(id, empty);
    }
    this.#flush();
  }

  digest(): string {
    this.#hashPending();
    this.#flush();
    const [branch] = this.#branches;
    if (!branch || this.#branches.length !== 1 || this.#queue.length > 0)
      throw new Error('fingerprint digested before every folder was settled');
    return branch.hash.digest('hex');
  }

  #hashPending(): void {
    if (this.#pending === '') return;
    for (const branch of this.#branches) branch.hash.update(this.#pending, 'latin1');
    this.#pending = '';
  }

  #flush(): void {
    while (this.#queue.length > 0) {
      const item = this.#queue[0] as Item;
      if (!('folder' in item)) {
        for (const branch of this.#branches) branch.hash.update(item.record, 'latin1');
      } else if (this.#settled.has(item.folder)) {
        if (this.#settled.get(item.folder))
          for (const branch of this.#branches) branch.hash.update(item.record, 'latin1');
        this.#settled.delete(item.folder);
      } else if (this.#branches.length * 2 <= MAX_BRANCHES) {
        this.#forked.add(item.folder);
        this.#branches = this.#branches.flatMap((branch) => {
          const withRecord = { hash: branch.hash.copy(), empty: new Set(branch.empty).add(item.folder) };
          withRecord.hash.update(item.record, 'latin1');
          return [branch, withRecord];
        });
      } else {
        return;
      }
      this.#queue.shift();
    }
  }
}
