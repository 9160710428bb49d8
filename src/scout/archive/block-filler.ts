import { readSync } from 'node:fs';
import type { Slot } from './block-pool.ts';
import { SourceReadError, type TarSink } from './tar-writer.ts';

/**
 * The tar stream cut into fixed-size blocks, filled in place: headers are copied in and file
 * data is read from disk straight into the block (a pool slot's `input`, block-pool.ts), so
 * each byte is copied once on its way to zstd. A full block is handed to `emit`, which answers
 * the next empty slot (and waits while all are in flight).
 */
export class BlockFiller implements TarSink {
  #slot: Slot;
  #block: Buffer;
  #used = 0;
  #total = 0;
  readonly #emit: (slot: Slot, length: number) => Promise<Slot>;

  constructor(first: Slot, emit: (slot: Slot, length: number) => Promise<Slot>) {
    this.#slot = first;
    this.#block = first.input;
    this.#emit = emit;
  }

  /** Tar bytes written so far. */
  get total(): number {
    return this.#total;
  }

  /** Copies `bytes` in; a promise only when a block filled and was handed on. */
  put(bytes: Buffer, from = 0): Promise<void> | undefined {
    const copied = bytes.copy(this.#block, this.#used, from);
    this.#used += copied;
    this.#total += copied;
    if (this.#used < this.#block.length) return undefined;
    return this.#flush().then(() =>
      from + copied < bytes.length ? this.put(bytes, from + copied) : undefined,
    );
  }

  /** A synchronous read into the block; a promise only when the block filled and was handed on. */
  readFrom(fd: number, position: number, length: number): number | Promise<number> {
    const room = Math.min(length, this.#block.length - this.#used);
    let bytesRead: number;
    try {
      bytesRead = readSync(fd, this.#block, this.#used, room, position);
    } catch (error) {
      throw new SourceReadError(error);
    }
    this.#used += bytesRead;
    this.#total += bytesRead;
    if (this.#used < this.#block.length) return bytesRead;
    return this.#flush().then(() => bytesRead);
  }

  /** Hands over the last, partly filled block; the slot it leaves unused is answered. */
  async end(): Promise<Slot> {
    if (this.#used > 0) await this.#flush();
    return this.#slot;
  }

  async #flush(): Promise<void> {
    const length = this.#used;
    this.#used = 0;
    this.#slot = await this.#emit(this.#slot, length);
    this.#block = this.#slot.input;
  }
}
