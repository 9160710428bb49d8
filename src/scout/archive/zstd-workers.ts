import type { MessagePort } from 'node:worker_threads';
import { Worker } from 'node:worker_threads';

/**
 * The worker's program, run from its source text (`eval`), so it needs no file beside the
 * bundle or the single executable. Self-contained: it may use nothing from this module.
 * Each message is a block (its buffer transferred, not copied); the block becomes one
 * complete zstd frame with a checksum, sent with the block's number to `frames` (the sealing
 * worker), and the block's buffer goes back to the sender for reuse.
 */
function zstdWorkerMain(): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const zlib = process.getBuiltinModule('node:zlib');
  const frames: MessagePort = workerData.frames;
  const options = {
    // One output buffer big enough for any block: no concatenation of output pieces.
    chunkSize: workerData.maxFrame,
    params: {
      [zlib.constants.ZSTD_c_compressionLevel]: workerData.level,
      [zlib.constants.ZSTD_c_checksumFlag]: 1,
    },
  };
  parentPort?.on('message', (job: { id: number; block: ArrayBuffer; length: number }) => {
    try {
      const frame = zlib.zstdCompressSync(new Uint8Array(job.block, 0, job.length), options);
      // A big answer is a slice of zlib's own output buffer: hand that buffer over whole.
      let owned = frame;
      if (frame.buffer.byteLength < 64 * 1024) {
        owned = Buffer.from(new ArrayBuffer(frame.length));
        frame.copy(owned);
      }
      frames.postMessage(
        { id: job.id, frame: owned.buffer, offset: owned.byteOffset, length: owned.length },
        [owned.buffer as ArrayBuffer],
      );
      parentPort.postMessage({ id: job.id, block: job.block }, [job.block]);
    } catch (error) {
      parentPort.postMessage({ id: job.id, error: String((error as Error).message ?? error) });
    }
  });
}

const WORKER_SOURCE = `(${zstdWorkerMain.toString()})()`;

/**
 * zstd on every core: long-lived worker threads, each turning a block into one complete zstd
 * frame, sent to one of `frames` (a port per worker) tagged with the block's number, in the
 * order blocks were given. Concatenated frames are one valid zstd stream (`zstd -d` reads it
 * whole).
 */
export class ZstdWorkers {
  readonly #workers: Worker[];
  readonly #pending = new Map<number, { resolve: (block: Buffer) => void; reject: (e: Error) => void }>();
  #next = 0;
  #failure: Error | null = null;
  readonly #onFailure: (error: Error) => void;

  constructor(options: {
    level: number;
    blockSize: number;
    frames: MessagePort[];
    onFailure: (error: Error) => void;
  }) {
    this.#onFailure = options.onFailure;
    this.#workers = options.frames.map((frames) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        // ZSTD_compressBound: the largest frame a block can become.
        workerData: {
          level: options.level,
          frames,
          maxFrame: options.blockSize + (options.blockSize >> 7) + 1024,
        },
        transferList: [frames],
      });
      worker.on('message', (answer: { id: number; block?: ArrayBuffer; error?: string }) => {
        const waiting = this.#pending.get(answer.id);
        this.#pending.delete(answer.id);
        if (answer.error !== undefined || !answer.block) {
          this.#fail(new Error(`zstd compression failed: ${answer.error ?? 'no block'}`));
        } else {
          waiting?.resolve(Buffer.from(answer.block));
        }
      });
      worker.on('error', (error: Error) => this.#fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.#fail(new Error(`a zstd worker stopped (exit code ${code})`));
      });
      return worker;
    });
  }

  /**
   * Compresses `block[0, length)` as block number `id` (0, 1, 2, … in order). The block's
   * buffer is given up; the promise answers it back once compressed.
   */
  compress(block: Buffer, length: number): Promise<Buffer> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (block.byteOffset !== 0 || block.buffer.byteLength !== block.length) {
      throw new Error('a zstd block must own its whole buffer (Buffer.allocUnsafeSlow)');
    }
    const id = this.#next;
    this.#next += 1;
    const worker = this.#workers[id % this.#workers.length] as Worker;
    return new Promise<Buffer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, block: block.buffer, length }, [block.buffer as ArrayBuffer]);
    });
  }

  /** Blocks given so far. */
  get count(): number {
    return this.#next;
  }

  /** Stops the workers; what is still pending fails. */
  async close(): Promise<void> {
    this.#failure ??= new Error('zstd workers closed');
    this.#rejectPending(this.#failure);
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }

  #fail(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#rejectPending(error);
    this.#onFailure(error);
  }

  #rejectPending(error: Error): void {
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
  }
}
