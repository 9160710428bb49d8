import type { MessagePort } from 'node:worker_threads';
import { Worker } from 'node:worker_threads';
import { type Slot, slotMessage } from './block-pool.ts';
import { WORKER_HEAP } from './worker-heap.ts';

/**
 * The worker's program, run from its source text (`eval`), so it needs no file beside the
 * bundle or the single executable. Self-contained: it may use nothing from this module.
 * Each message is a slot (block-pool.ts, its buffers transferred, not copied): the tar bytes
 * in `input` become one complete zstd frame with a checksum, written into the slot's own
 * `output`, and the slot goes on with the block's number to `frames` (the sealing worker).
 *
 * One compression context lives as long as the worker, and each frame is ended with
 * ZSTD_e_end on it (the context then starts the next frame afresh). `zstdCompressSync` would
 * make and free a context of several MiB, and an output buffer, per block. Node has no public
 * call that compresses into a given buffer, so this uses the one its own zlib code uses
 * (`_handle.writeSync`), and falls back to `zstdCompressSync` plus a copy if a Node release
 * lacks it.
 */
function zstdWorkerMain(): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const zlib = process.getBuiltinModule('node:zlib');
  const frames: MessagePort = workerData.frames;
  const params = {
    [zlib.constants.ZSTD_c_compressionLevel]: workerData.level,
    [zlib.constants.ZSTD_c_checksumFlag]: 1,
  };
  const stream = new zlib.ZstdCompress({ params }) as unknown as {
    _handle?: { writeSync?: (...args: unknown[]) => void };
    _writeState?: Uint32Array;
    on(event: 'error', listener: (error: Error) => void): void;
  };
  let streamError: Error | null = null;
  stream.on('error', (error) => {
    streamError = error;
  });
  const handle = stream._handle;
  const state = stream._writeState;
  const direct = typeof handle?.writeSync === 'function' && state instanceof Uint32Array;

  /** Compresses `input` as one frame into `output`; answers the frame's length. */
  function compress(input: Buffer, output: Buffer): number {
    if (!direct) return zlib.zstdCompressSync(input, { params }).copy(output);
    handle?.writeSync?.(zlib.constants.ZSTD_e_end, input, 0, input.length, output, 0, output.length);
    if (streamError) throw streamError;
    const [outLeft = 0, inLeft = 0] = state as Uint32Array;
    // The output holds ZSTD_compressBound(block): a frame that did not end in it is a bug.
    if (inLeft !== 0 || outLeft === 0) throw new Error('the zstd frame did not fit its output block');
    return output.length - outLeft;
  }

  parentPort?.on(
    'message',
    (job: { id: number; input: ArrayBuffer; output: ArrayBuffer; length: number }) => {
      try {
        const length = compress(Buffer.from(job.input, 0, job.length), Buffer.from(job.output));
        frames.postMessage({ id: job.id, input: job.input, output: job.output, length }, [
          job.input,
          job.output,
        ]);
      } catch (error) {
        parentPort.postMessage({ id: job.id, error: String((error as Error).message ?? error) });
      }
    },
  );
}

const WORKER_SOURCE = `(${zstdWorkerMain.toString()})()`;

/** ZSTD_compressBound: the largest frame a block of `size` bytes can become. */
export const frameBound = (size: number) => size + (size >> 7) + 1024;

/**
 * zstd on every core: long-lived worker threads, each turning a block into one complete zstd
 * frame, sent to one of `frames` (a port per worker) tagged with the block's number, in the
 * order blocks were given. Concatenated frames are one valid zstd stream (`zstd -d` reads it
 * whole).
 */
export class ZstdWorkers {
  readonly #workers: Worker[];
  #next = 0;
  #failure: Error | null = null;
  readonly #onFailure: (error: Error) => void;

  constructor(options: { level: number; frames: MessagePort[]; onFailure: (error: Error) => void }) {
    this.#onFailure = options.onFailure;
    this.#workers = options.frames.map((frames) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { level: options.level, frames },
        transferList: [frames],
        resourceLimits: WORKER_HEAP,
      });
      worker.on('message', (answer: { id: number; error?: string }) => {
        this.#fail(new Error(`zstd compression failed: ${answer.error ?? 'no frame'}`));
      });
      worker.on('error', (error: Error) => this.#fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.#fail(new Error(`a zstd worker stopped (exit code ${code})`));
      });
      return worker;
    });
  }

  /**
   * Compresses `slot.input[0, length)` into `slot.output` as block number `id` (0, 1, 2, … in
   * order). The slot is given up: the sealing worker hands it back (seal-worker.ts).
   */
  compress(slot: Slot, length: number): void {
    if (this.#failure) throw this.#failure;
    const id = this.#next;
    this.#next += 1;
    const worker = this.#workers[id % this.#workers.length] as Worker;
    const message = slotMessage(slot);
    worker.postMessage({ id, ...message, length }, [message.input, message.output]);
  }

  /** Blocks given so far. */
  get count(): number {
    return this.#next;
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    this.#failure ??= new Error('zstd workers closed');
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }

  #fail(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#onFailure(error);
  }
}
