import { alignedBuffer } from '../../core/aligned-buffer.ts';
import { releaseNow } from '../../core/release-memory.ts';

/** Each block handed on, to the pool it goes back to. */
const owners = new WeakMap<ArrayBufferLike, PiecePool>();

/**
 * The stage that reads `piece` last is done with it: a block of a pool (or a slice of one,
 * read in order) goes back to its pool once its last byte is. Any other buffer is ignored.
 * True when `piece` is (part of) a pool's block.
 */
export function consumed(piece: Buffer): boolean {
  const pool = owners.get(piece.buffer);
  pool?.consumed(piece);
  return pool !== undefined;
}

/**
 * Blocks of `size` bytes that a restore stage fills and hands downstream, and that come back
 * when the stage that consumes them is done with their last byte (`consumed`): a restore
 * allocates a few blocks and reuses them, instead of a fresh buffer per MiB of snapshot that
 * only the garbage collector frees (20–28 full collections per 0.25 GiB restore, started by
 * memory outside the heap, not by the heap). The blocks out at once are bounded by the
 * buffering of the streams between the two stages; `keep` bounds those kept for reuse.
 */
export class PiecePool {
  readonly size: number;
  readonly #keep: number;
  readonly #free: Buffer[] = [];
  /** Blocks handed on: their memory → the block and the end of the bytes handed on. */
  readonly #out = new Map<ArrayBufferLike, { block: Buffer; end: number }>();
  #allocated = 0;
  #closed = false;

  constructor(options: { size: number; keep: number }) {
    this.size = options.size;
    this.#keep = options.keep;
  }

  /** Blocks allocated so far (the rest of the takes reused one). */
  get allocated(): number {
    return this.#allocated;
  }

  /** A free block, or a new one while all are out. */
  take(): Buffer {
    const free = this.#free.pop();
    if (free) return free;
    this.#allocated += 1;
    return alignedBuffer(this.size);
  }

  /** Gives back a block taken but not handed on. */
  give(block: Buffer): void {
    if (!this.#closed && this.#free.length < this.#keep) this.#free.push(block);
    else releaseNow(block);
  }

  /** `block`'s first `length` bytes, to hand downstream; the block comes back through `consumed`. */
  handOn(block: Buffer, length: number): Buffer {
    this.#out.set(block.buffer, { block, end: length });
    owners.set(block.buffer, this);
    return block.subarray(0, length);
  }

  /**
   * A consumer is done with `piece` (a handed-on block or a slice of one, consumed in order):
   * the block is free again once its last byte is. Anything else is ignored.
   */
  consumed(piece: Buffer): void {
    const out = this.#out.get(piece.buffer);
    if (!out || piece.byteOffset + piece.length !== out.end) return;
    this.#out.delete(piece.buffer);
    owners.delete(piece.buffer);
    this.give(out.block);
  }

  /** Frees the free blocks now, and each block still out once it comes back. */
  close(): void {
    this.#closed = true;
    for (const block of this.#free.splice(0)) releaseNow(block);
  }
}
