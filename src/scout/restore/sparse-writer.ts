import { ftruncateSync, writeSync } from 'node:fs';

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

  constructor(fd: number) {
    this.#fd = fd;
  }

  write(chunk: Buffer): void {
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
  }

  /** Bytes given so far. */
  get size(): number {
    return this.#position;
  }

  /** Extends the file over a trailing hole. */
  finish(): void {
    if (this.#end < this.#position) ftruncateSync(this.#fd, this.#position);
  }

  #writeAt(chunk: Buffer, from: number, to: number): void {
    const position = this.#position + from;
    for (let at = from; at < to; ) at += writeSync(this.#fd, chunk, at, to - at, position + (at - from));
    this.#end = this.#position + to;
  }
}
