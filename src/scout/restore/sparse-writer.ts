import { ftruncateSync, write, writeSync } from 'node:fs';

/** A file-system block: a run of zeros this long, aligned in the file, becomes a hole. */
const HOLE_BLOCK = 4096;
const ZEROS = Buffer.alloc(HOLE_BLOCK);

/** Whether SparseWriter would leave a hole in a new file given all of `data` at once. */
export function hasHoleBlock(data: Buffer): boolean {
  for (let at = 0; at < data.length; at += HOLE_BLOCK) {
    const next = Math.min(data.length, at + HOLE_BLOCK);
    if (data[at] === 0 && data.subarray(at, next).equals(ZEROS.subarray(0, next - at))) return true;
  }
  return false;
}

/**
 * Writes a file's data into a new (empty) file, skipping every aligned 4 KiB block of zeros
 * (and zero pieces of blocks at the edges of chunks) instead of writing it, so a sparse file (a VM image, a database) keeps its holes whether or
 * not the archive marked them. `finish` sets the final size, which makes a trailing hole.
 * The check costs one byte compare per block of ordinary data (a block starting with a
 * non-zero byte is data), and no extra system call.
 */
export class SparseWriter {
  #position = 0;
  #end = 0;
  readonly #fd: number;
  /** With `inFlight`: writes on the thread pool, at most this many at a time. */
  readonly #inFlight: number;
  /** Writes on the pool, oldest first, each with the number of the chunk it reads. */
  readonly #pending = new Map<Promise<void>, number>();
  /** Chunks given so far (those all holes too). */
  #chunks = 0;
  #failure: Error | null = null;

  /**
   * `inFlight` > 0 (a big file as it streams): each run of data is written on the thread pool
   * while the restore decrypts the next chunk, instead of the restore's thread waiting for the
   * file system. A chunk may still be read by a write on the pool after `write` answered, but
   * only one of the last `inFlight` chunks given: `write` holds the caller back (its promise)
   * until the writes of older chunks are done, whether or not the chunks in between had data to
   * write. The tar reader frees an entry's older pieces as it reads on (tar-reader.ts,
   * FREED_HELD); counting only the writes let a piece of data followed by a run of holes be
   * freed while its write still waited for a thread (the data was lost: zeros were restored).
   */
  constructor(fd: number, options: { inFlight?: number } = {}) {
    this.#fd = fd;
    this.#inFlight = options.inFlight ?? 0;
  }

  /** Writes `chunk` (holes for its zero blocks); a promise when writes on the pool must go down first. */
  write(chunk: Buffer): Promise<void> | undefined {
    const base = this.#position;
    let at = 0;
    let dataFrom = 0;
    while (at < chunk.length) {
      const next = Math.min(chunk.length, at + HOLE_BLOCK - ((base + at) % HOLE_BLOCK));
      // The file is new: what is not written reads as zeros. A piece of a block at a chunk's
      // edge is skipped too when it is all zeros (the block is a hole if its other piece is).
      if (chunk[at] === 0 && chunk.subarray(at, next).equals(ZEROS.subarray(0, next - at))) {
        if (at > dataFrom) this.#writeAt(chunk, dataFrom, at);
        dataFrom = next;
      }
      at = next;
    }
    if (chunk.length > dataFrom) this.#writeAt(chunk, dataFrom, chunk.length);
    this.#position += chunk.length;
    if (this.#failure) throw this.#failure;
    this.#chunks += 1;
    if (this.#inFlight > 0 && this.#mustWait()) return this.#oneDone();
    return undefined;
  }

  /** Bytes given so far. */
  get size(): number {
    return this.#position;
  }

  /** Extends the file over a trailing hole (after `settle`, with writes on the pool). */
  finish(): void {
    if (this.#pending.size > 0) throw new Error('SparseWriter.finish before its writes settled');
    if (this.#failure) throw this.#failure;
    if (this.#end < this.#position) ftruncateSync(this.#fd, this.#position);
  }

  /** Waits until no write is on the pool (before the descriptor may be closed, whatever failed). */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending.keys());
  }

  /** Too many writes on the pool, or one reading a chunk given `inFlight` or more chunks ago. */
  #mustWait(): boolean {
    if (this.#pending.size >= this.#inFlight) return true;
    const oldest = this.#pending.values().next();
    return !oldest.done && oldest.value <= this.#chunks - 1 - this.#inFlight;
  }

  async #oneDone(): Promise<void> {
    while (this.#mustWait()) await Promise.race(this.#pending.keys());
    if (this.#failure) throw this.#failure;
  }

  #writeAt(chunk: Buffer, from: number, to: number): void {
    const position = this.#position + from;
    this.#end = this.#position + to;
    if (this.#inFlight === 0) {
      for (let at = from; at < to; ) at += writeSync(this.#fd, chunk, at, to - at, position + (at - from));
      return;
    }
    const done: Promise<void> = this.#poolWrite(chunk, from, to, position).then(
      () => {
        this.#pending.delete(done);
      },
      (error: Error) => {
        this.#pending.delete(done);
        this.#failure ??= error;
      },
    );
    this.#pending.set(done, this.#chunks);
  }

  /** `chunk[from, to)` written at `position` on the thread pool, short writes continued. */
  async #poolWrite(chunk: Buffer, from: number, to: number, position: number): Promise<void> {
    for (let at = from; at < to; ) {
      at += await new Promise<number>((resolve, reject) =>
        write(this.#fd, chunk, at, to - at, position + (at - from), (error, written) =>
          error ? reject(error) : resolve(written),
        ),
      );
    }
  }
}
