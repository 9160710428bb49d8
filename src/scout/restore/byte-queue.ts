// The bytes read from a stream and not yet used, kept as the chunks that arrived: adding is
// O(1) and each byte is copied at most once, however small the chunks (no growing buffer
// concatenated again with every chunk).
const EMPTY = Buffer.alloc(0);

export class ByteQueue {
  #chunks: Buffer[] = [];
  /** Index of the first chunk still in use; used ones are dropped in batches. */
  #head = 0;
  #length = 0;
  readonly #onUsed: ((chunk: Buffer) => void) | undefined;

  /** `onUsed`: told of each chunk once its last byte was taken (or skipped). */
  constructor(options: { onUsed?: (chunk: Buffer) => void } = {}) {
    this.#onUsed = options.onUsed;
  }

  get length(): number {
    return this.#length;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** Up to `n` bytes from the front, without copying: at most the rest of the first chunk. */
  takeSome(n: number): Buffer {
    const first = this.#chunks[this.#head];
    if (!first || n <= 0) return Buffer.alloc(0);
    const piece = first.subarray(0, Math.min(n, first.length));
    this.#consume(piece.length);
    return piece;
  }

  /**
   * Exactly `n` bytes from the front (the caller checked `length`); copies only across chunks,
   * into `scratch` when given (at least `n` bytes; the result is then valid until its next use).
   */
  take(n: number, scratch?: Buffer): Buffer {
    const first = this.#chunks[this.#head];
    if (first && first.length >= n) return this.takeSome(n);
    const out = scratch ? scratch.subarray(0, n) : Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const piece = this.takeSome(n - at);
      if (piece.length === 0) throw new Error('ByteQueue.take past the end');
      piece.copy(out, at);
      at += piece.length;
    }
    return out;
  }

  /** Drops `n` bytes from the front (the caller checked `length`). */
  skip(n: number): void {
    let left = n;
    while (left > 0) {
      const dropped = this.takeSome(left).length;
      if (dropped === 0) throw new Error('ByteQueue.skip past the end');
      left -= dropped;
    }
  }

  #consume(n: number): void {
    const first = this.#chunks[this.#head] as Buffer;
    this.#length -= n;
    if (n < first.length) {
      this.#chunks[this.#head] = first.subarray(n);
      return;
    }
    // Drop the reference at once: a queue that never runs empty (the age decrypter's) would
    // otherwise keep every chunk it ever held until the next compaction.
    this.#chunks[this.#head] = EMPTY;
    this.#head += 1;
    this.#onUsed?.(first);
    if (this.#head === this.#chunks.length) {
      this.#chunks.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}
