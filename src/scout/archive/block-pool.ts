import { releaseNow } from '../../core/release-memory.ts';

/**
 * One block of the archive pipeline: tar bytes go into `input` (read from disk straight into
 * it), a zstd worker compresses them into `output`, the sealing worker encrypts `output` and
 * hands both back. Each owns its whole ArrayBuffer, so it can be transferred between threads
 * (moved, never copied).
 */
export interface Slot {
  input: Buffer;
  output: Buffer;
}

/** A slot's buffers as they travel in a message (transferred). */
export interface SlotMessage {
  input: ArrayBuffer;
  output: ArrayBuffer;
}

export const slotMessage = (slot: Slot): SlotMessage => ({
  input: slot.input.buffer as ArrayBuffer,
  output: slot.output.buffer as ArrayBuffer,
});

export const slotOf = (message: SlotMessage): Slot => ({
  input: Buffer.from(message.input),
  output: Buffer.from(message.output),
});

/**
 * A fixed set of slots, allocated once per archive and reused for every block: nothing is
 * allocated per block, so no page is faulted in and unmapped again per MiB (in these virtual
 * machines that made the archive stage 2.5× slower under glibc's small mmap threshold), and the
 * memory in flight is `count` slots whatever the archive size. Slots go out with `take` and come
 * back with `give`.
 */
export class BlockPool {
  readonly #free: Slot[] = [];
  readonly #blockSize: number;
  readonly #frameSize: number;
  #left: number;

  constructor(options: { count: number; blockSize: number; frameSize: number }) {
    this.#left = options.count;
    this.#blockSize = options.blockSize;
    this.#frameSize = options.frameSize;
  }

  /** A free slot (allocated, up to `count`, only when none was given back), or null while all are out. */
  take(): Slot | null {
    const free = this.#free.pop();
    if (free) return free;
    if (this.#left === 0) return null;
    this.#left -= 1;
    return {
      input: Buffer.allocUnsafeSlow(this.#blockSize),
      output: Buffer.allocUnsafeSlow(this.#frameSize),
    };
  }

  give(slot: Slot): void {
    this.#free.push(slot);
  }

  /** Frees the memory of every slot given back. */
  release(): void {
    for (const slot of this.#free.splice(0)) {
      releaseNow(slot.input);
      releaseNow(slot.output);
    }
  }
}
