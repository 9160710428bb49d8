import type { MessagePort } from 'node:worker_threads';
import { Worker } from 'node:worker_threads';
import { ageStreamSealer } from './age-stream.ts';
import { type Slot, slotOf } from './block-pool.ts';
import { WORKER_HEAP } from './worker-heap.ts';

/**
 * The sealing worker's program, run from its source text with the age STREAM sealer passed
 * in (both self-contained). Frames arrive from the zstd workers' ports tagged with their
 * number, each in its slot's `output` (block-pool.ts); they are sealed strictly in order (into
 * the sealer's one reused output buffer), hashed and written to the open file `fd`, and each
 * slot goes back to the parent (`{ sealed, written, input, output }`: frames sealed and bytes
 * written so far, and the slot's buffers, transferred). After `{ end: n }` and frame n-1, the
 * final chunk goes out and the parent gets `{ size, sha256 }`.
 */
function sealWorkerMain(makeSealer: typeof ageStreamSealer): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { createHash } = process.getBuiltinModule('node:crypto');
  const { writeSync, fdatasync } = process.getBuiltinModule('node:fs');
  const parent = parentPort as MessagePort;
  const sealer = makeSealer(Buffer.from(workerData.payloadKey));
  const hash = createHash('sha256');
  const fd: number = workerData.fd;
  const waiting = new Map<number, { input: ArrayBuffer; output: ArrayBuffer; length: number }>();
  let next = 0;
  let end: number | null = null;
  let size = 0;
  let failed = false;

  // Every 64 MiB written, the file's pages start for the disk (fdatasync on the thread pool, one
  // at a time, not waited for): the disk writes while the archive is made, so the final fsync
  // (pipeline.ts) has little left, instead of the whole archive at its end. Linux reports a
  // write-back error once per open file: the flush that sees it may be this one, not the final
  // fsync on the same descriptor, so its error fails the archive here, and the end waits for
  // the flush in flight.
  const FLUSH_EVERY = 64 * 1024 * 1024;
  let flushedAt = 0;
  let flushing = false;
  let flushError: Error | null = null;
  let afterFlush: (() => void) | null = null;
  const flushed = (error: Error | null) => {
    flushing = false;
    if (error) flushError ??= error;
    const then = afterFlush;
    afterFlush = null;
    then?.();
  };
  const diskFailure = () => `the archive could not be written to the disk: ${flushError?.message}`;

  function write(bytes: Buffer): void {
    if (flushError) throw new Error(diskFailure());
    hash.update(bytes);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    size += bytes.length;
    if (!flushing && size - flushedAt >= FLUSH_EVERY) {
      flushing = true;
      flushedAt = size;
      fdatasync(fd, flushed);
    }
  }

  function advance(): void {
    if (failed) return;
    try {
      let frame = waiting.get(next);
      while (frame) {
        waiting.delete(next);
        write(sealer.push(Buffer.from(frame.output, 0, frame.length)));
        next += 1;
        parent.postMessage({ sealed: next, written: size, input: frame.input, output: frame.output }, [
          frame.input,
          frame.output,
        ]);
        frame = waiting.get(next);
      }
      if (end !== null && next === end) {
        write(sealer.end());
        end = null;
        const sha256 = hash.digest('hex');
        const finish = () => {
          if (flushError) {
            failed = true;
            parent.postMessage({ error: diskFailure() });
          } else parent.postMessage({ size, sha256 });
        };
        if (flushing) afterFlush = finish;
        else finish();
      }
    } catch (error) {
      failed = true;
      parent.postMessage({ error: String((error as Error).message ?? error) });
    }
  }

  write(Buffer.from(workerData.header));
  for (const port of workerData.frames as MessagePort[]) {
    port.on('message', (m: { id: number; input: ArrayBuffer; output: ArrayBuffer; length: number }) => {
      waiting.set(m.id, m);
      advance();
    });
  }
  parent.on('message', (m: { end: number }) => {
    end = m.end;
    advance();
  });
}

const WORKER_SOURCE = `(${sealWorkerMain.toString()})(${ageStreamSealer.toString()})`;

/**
 * age encryption, SHA-256 and writing of the archive on a thread of their own, fed zstd
 * frames in any order through `frames` (one port per zstd worker) and sealing them in order.
 */
export class SealWorker {
  readonly #worker: Worker;
  #result: ((r: { size: number; sha256: string }) => void) | null = null;
  #failure: Error | null = null;
  #reject: ((error: Error) => void) | null = null;

  constructor(options: {
    /** The archive file, open for writing; the caller closes it. */
    fd: number;
    /** The age header: the file's first bytes. */
    header: Buffer;
    payloadKey: Buffer;
    frames: MessagePort[];
    /**
     * Frames sealed and written so far, the slot the last one came in (handed back), and the
     * file's bytes written so far (readable from it now).
     */
    onSealed: (count: number, slot: Slot, written: number) => void;
    onFailure: (error: Error) => void;
  }) {
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        fd: options.fd,
        header: options.header,
        payloadKey: options.payloadKey,
        frames: options.frames,
      },
      transferList: options.frames,
      resourceLimits: WORKER_HEAP,
    });
    const fail = (error: Error) => {
      if (this.#failure) return;
      this.#failure = error;
      this.#reject?.(error);
      options.onFailure(error);
    };
    this.#worker.on(
      'message',
      (m: {
        sealed?: number;
        written?: number;
        input?: ArrayBuffer;
        output?: ArrayBuffer;
        size?: number;
        sha256?: string;
        error?: string;
      }) => {
        if (m.error !== undefined) fail(new Error(`cannot write the archive: ${m.error}`));
        else if (m.sealed !== undefined && m.input && m.output)
          options.onSealed(m.sealed, slotOf({ input: m.input, output: m.output }), m.written ?? 0);
        else if (m.sha256 !== undefined) this.#result?.({ size: m.size ?? 0, sha256: m.sha256 });
      },
    );
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`the archive's sealing worker stopped (exit code ${code})`));
    });
  }

  /** After `frames` frames in all: the final chunk, then the archive's size and SHA-256. */
  end(frames: number): Promise<{ size: number; sha256: string }> {
    return new Promise((resolve, reject) => {
      if (this.#failure) return reject(this.#failure);
      this.#result = resolve;
      this.#reject = reject;
      this.#worker.postMessage({ end: frames });
    });
  }

  async close(): Promise<void> {
    this.#failure ??= new Error('sealing worker closed');
    await this.#worker.terminate();
  }
}
