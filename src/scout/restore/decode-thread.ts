// A restore's decryption and zstd on a thread of their own: this thread reads the download
// and the tar stream and writes files while that one turns encrypted bytes into tar bytes,
// as `age -d | zstd -d` run beside `tar -x`.
import { Duplex } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
import { Worker } from 'node:worker_threads';
import { ZstdDecompress } from 'node:zlib';
import { releaseNow } from '../../core/release-memory.ts';
import { AgeError, type AgeFailure, readAgeHeader } from '../archive/age.ts';
import { ArmorDecoder, startsArmor } from '../archive/age-armor.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import { readToItsEnd } from './coalescer.ts';
import { consumed } from './piece-pool.ts';

/** Encrypted bytes per message to the thread, and tar bytes per block back. */
const BLOCK = 1024 * 1024;
/** Encrypted blocks sent and not yet read by the thread, at most. */
const INPUT_IN_FLIGHT = 3;
/** Tar blocks the thread may send ahead of what the tar reader took. */
const OUTPUT_AHEAD = 4;
/** The thread keeps a few objects per block on its heap; its blocks are outside it. */
const THREAD_HEAP = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };

/** Messages to the thread. */
type ToThread = { input?: ArrayBuffer; length?: number; end?: boolean; more?: number };
/** Messages from the thread. */
type FromThread = {
  took?: number;
  output?: ArrayBuffer;
  length?: number;
  end?: boolean;
  error?: string;
  kind?: AgeFailure | 'zstd';
  code?: string;
};

/**
 * The thread's program, run from its source text (`eval`, like src/scout/archive/zstd-workers.ts),
 * so it needs no file beside the bundle. Self-contained: it may use nothing from this module.
 * It opens the age STREAM chunks (ChaCha20-Poly1305 under the payload key, a big-endian
 * counter nonce whose last byte marks the final chunk: the rules and messages of
 * createAgeDecrypt in src/scout/archive/age.ts) and decompresses their plaintext with one zstd
 * context into blocks of its own, sent (transferred) in order. A chunk is opened only once
 * more bytes follow it or the input ended, so the final one is known. zstd runs through the
 * call Node's own synchronous zlib code uses (`_handle.writeSync`), which says how much input
 * is left: a frame ending inside a piece is followed by the next one (nodejs/node#64741 is in
 * the stream's loop, not here). The end is asked with ZSTD_e_end, which refuses a stream cut
 * inside a frame.
 */
function decodeThreadMain(): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { createDecipheriv, createSecretKey } = process.getBuiltinModule('node:crypto');
  const zlib = process.getBuiltinModule('node:zlib');
  const parent = parentPort as MessagePort;
  const key = createSecretKey(Buffer.from(workerData.payloadKey as Uint8Array));
  const block: number = workerData.block;
  const chunk = 64 * 1024;
  const tag = 16;
  const sealedSize = chunk + tag;
  const nothing = Buffer.alloc(0);
  const nonce = Buffer.alloc(12);
  /** A sealed chunk that spans two input blocks, gathered here. */
  const span = Buffer.allocUnsafeSlow(sealedSize);
  const zstd = new zlib.ZstdDecompress() as unknown as {
    _handle: { writeSync(...args: unknown[]): void };
    _writeState: Uint32Array;
    errored: (Error & { code?: string }) | null;
    on(event: 'error', listener: () => void): void;
  };
  // Its errors are read right after each call (`errored`); the event comes later.
  zstd.on('error', () => {});

  class Failure extends Error {
    readonly kind: string;
    readonly code: string | undefined;
    constructor(message: string, kind: string, code?: string) {
      super(message);
      this.kind = kind;
      this.code = code;
    }
  }

  const inputs: Buffer[] = [];
  let inAt = 0;
  let available = 0;
  let ended = false;
  /** Input blocks read to their end, freed once the chunk taken from them is open. */
  let spent: Buffer[] = [];
  let counter = 0;
  let sawLast = false;
  let plain: Buffer | null = null;
  let plainAt = 0;
  let out: Buffer | null = null;
  let filled = 0;
  /** zstd filled the last block: more of its output may be waiting inside it. */
  let flushing = false;
  let ahead: number = workerData.ahead;
  let finished = false;
  let failed = false;

  function advance(n: number): void {
    inAt += n;
    available -= n;
    const first = inputs[0] as Buffer;
    if (inAt === first.length) {
      spent.push(first);
      inputs.shift();
      inAt = 0;
    }
  }

  /** The next `n` bytes of input (`n` ≤ available): a view of one block, or gathered in `span`. */
  function take(n: number): Buffer {
    const first = inputs[0] as Buffer;
    if (first.length - inAt >= n) {
      const view = first.subarray(inAt, inAt + n);
      advance(n);
      return view;
    }
    let got = 0;
    while (got < n) {
      const from = inputs[0] as Buffer;
      const step = Math.min(n - got, from.length - inAt);
      from.copy(span, got, inAt, inAt + step);
      got += step;
      advance(step);
    }
    return span.subarray(0, n);
  }

  function open(sealed: Buffer, last: boolean): Buffer | null {
    nonce.writeUIntBE(counter, 5, 6);
    nonce[11] = last ? 1 : 0;
    const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: tag });
    decipher.setAuthTag(sealed.subarray(sealed.length - tag));
    const opened = decipher.update(sealed.subarray(0, sealed.length - tag));
    try {
      decipher.final();
    } catch {
      return null;
    }
    return opened;
  }

  /** Opens the next chunk into `plain`; false while no chunk is known whole yet. */
  function nextPlain(): boolean {
    if (!(available > sealedSize || (ended && available > 0))) return false;
    if (sawLast) throw new Failure('data after the final age chunk', 'payload');
    const n = Math.min(sealedSize, available);
    if (n < tag) throw new Failure('truncated age payload chunk', 'payload');
    const sealed = take(n);
    let opened = n === sealedSize ? open(sealed, false) : null;
    if (opened === null) {
      opened = open(sealed, true);
      if (opened === null) throw new Failure('decryption failed: wrong key or damaged archive', 'payload');
      if (opened.length === 0 && counter > 0) throw new Failure('empty final age chunk', 'payload');
      sawLast = true;
    }
    counter += 1;
    if (spent.length > 0) {
      parent.postMessage({ took: spent.length });
      for (const done of spent) (done.buffer as ArrayBuffer & { transfer(n: number): void }).transfer(0);
      spent = [];
    }
    plain = opened;
    plainAt = 0;
    return true;
  }

  function zstdCall(flush: number, input: Buffer, at: number): void {
    out ??= Buffer.allocUnsafeSlow(block);
    const output = out;
    zstd._handle.writeSync(flush, input, at, input.length - at, output, filled, output.length - filled);
    const error = zstd.errored;
    if (error) throw new Failure(String(error.message), 'zstd', error.code);
    const [outLeft = 0, inLeft = 0] = zstd._writeState;
    const before = filled;
    filled = output.length - outLeft;
    flushing = outLeft === 0;
    if (input !== nothing) {
      if (inLeft === input.length - at && filled === before)
        throw new Failure('zstd made no progress', 'zstd');
      plainAt = input.length - inLeft;
    }
    if (filled === output.length) send();
  }

  function send(): void {
    const output = out as Buffer;
    parent.postMessage({ output: output.buffer, length: filled }, [output.buffer as ArrayBuffer]);
    out = null;
    filled = 0;
    ahead -= 1;
  }

  /** Decrypts and decompresses while there is input and the restore has room for more blocks. */
  function pump(): void {
    while (ahead > 0) {
      if (plain) {
        zstdCall(zlib.constants.ZSTD_e_continue, plain, plainAt);
        if (plainAt === plain.length) {
          if (plain.byteOffset === 0 && plain.length === plain.buffer.byteLength)
            (plain.buffer as ArrayBuffer & { transfer(n: number): void }).transfer(0);
          plain = null;
        }
      } else if (flushing) zstdCall(zlib.constants.ZSTD_e_continue, nothing, 0);
      else if (!nextPlain()) {
        if (ended && available === 0 && !finished) end();
        return;
      }
    }
  }

  function end(): void {
    finished = true;
    if (!sawLast) throw new Failure('truncated age payload: the final chunk is missing', 'payload');
    // A stream cut inside a zstd frame is refused here ("unexpected end of file").
    zstdCall(zlib.constants.ZSTD_e_end, nothing, 0);
    if (filled > 0) send();
    parent.postMessage({ end: true });
  }

  parent.on('message', (message: ToThread) => {
    if (failed) return;
    try {
      if (message.input) {
        const input = Buffer.from(message.input, 0, message.length);
        if (input.length > 0) {
          inputs.push(input);
          available += input.length;
        } else parent.postMessage({ took: 1 });
      }
      if (message.end) ended = true;
      if (message.more) ahead += message.more;
      pump();
    } catch (error) {
      failed = true;
      const failure = error instanceof Failure ? error : null;
      parent.postMessage({
        error: String((error as Error).message ?? error),
        kind: failure?.kind ?? 'payload',
        code: failure?.code,
      });
    }
  });
}

const THREAD_SOURCE = `(${decodeThreadMain.toString()})()`;

/** Whether this Node has the zstd call the thread uses (it has been in every release with zstd). */
export function decodeThreadWorks(): boolean {
  const probe = new ZstdDecompress() as unknown as { _handle?: { writeSync?: unknown }; close(): void };
  const works = typeof probe._handle?.writeSync === 'function';
  probe.close();
  return works;
}

/** The thread's failure as the error the restore classifies: an AgeError, or zstd's own (code ZSTD_error_*, Z_*). */
function failure(message: FromThread): Error {
  if (message.kind === 'zstd') {
    const error = new Error(String(message.error)) as NodeJS.ErrnoException;
    if (message.code) error.code = message.code;
    return error;
  }
  return new AgeError(String(message.error), (message.kind ?? 'payload') as AgeFailure);
}

/**
 * An age-encrypted zstd stream (binary or armored) in, its plaintext out in blocks of up to
 * 1 MiB (object mode), decrypted with the first of `identities` that opens it and decompressed
 * on a thread of its own (see `decodeThreadMain`). The header is read here; then each 1 MiB of
 * input is copied into a block that goes to the thread (transferred), and the thread sends
 * tar blocks back (transferred), at most a few ahead of what is read from this stream. Input
 * chunks of a pool go back to it once copied (piece-pool.ts); `freeCopied`: the input's
 * buffers are this stream's alone (a download's socket reads), freed once copied. The thread
 * stopping (crash, out of memory) fails the stream; destroying the stream stops the thread.
 */
export function createDecodeThread(identities: ScoutKey[], options: { freeCopied?: boolean } = {}): Duplex {
  let armor: ArmorDecoder | null | undefined;
  let head: Buffer = Buffer.alloc(0);
  let thread: Worker | null = null;
  let gathering: Buffer | null = null;
  let gathered = 0;
  let inFlight = 0;
  /** A write's callback, waiting until the thread took an input block. */
  let waiting: (() => void) | null = null;
  const received: (Buffer | null)[] = [];
  let wanted = false;
  let over = false;

  const stop = () => {
    over = true;
    const running = thread;
    thread = null;
    void running?.terminate();
  };

  const stream = new Duplex({
    readableObjectMode: true,
    readableHighWaterMark: 2,
    write(chunk: Buffer, _encoding, done) {
      try {
        if (armor === undefined && chunk.length > 0)
          armor = startsArmor(chunk[0] as number) ? new ArmorDecoder() : null;
        const bytes = armor ? armor.push(chunk) : chunk;
        if (thread) gather(bytes);
        else {
          head = Buffer.concat([head, bytes]);
          start(false);
        }
        // Copied: a pooled piece goes back to its pool; with freeCopied, a buffer read to its end is
        // freed (coalescer.ts). Not an armored one: the armor decoder keeps a view of a line it
        // has not seen the end of.
        if (!armor && !consumed(chunk) && options.freeCopied && readToItsEnd(chunk)) releaseNow(chunk);
        if (inFlight >= INPUT_IN_FLIGHT) waiting = () => done();
        else done();
      } catch (error) {
        done(error as Error);
      }
    },
    final(done) {
      try {
        armor?.end();
        if (!thread) start(true);
        if (gathering) send();
        thread?.postMessage({ end: true } satisfies ToThread);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    read() {
      wanted = true;
      deliver();
    },
    destroy(error, callback) {
      stop();
      callback(error);
    },
  });

  function start(final: boolean): void {
    const header = readAgeHeader(head, identities, final);
    if (!header) return;
    const rest = head.subarray(header.length);
    head = Buffer.alloc(0);
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { payloadKey: header.payloadKey, block: BLOCK, ahead: OUTPUT_AHEAD },
      resourceLimits: THREAD_HEAP,
    });
    worker.on('message', (message: FromThread) => answer(message));
    worker.on('error', (error: Error) => stream.destroy(error));
    worker.on('exit', (code) => {
      if (!over) stream.destroy(new Error(`the restore's decrypting thread stopped (exit code ${code})`));
    });
    thread = worker;
    gather(rest);
  }

  function gather(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length) {
      gathering ??= Buffer.allocUnsafeSlow(BLOCK);
      const copied = bytes.copy(gathering, gathered, at);
      gathered += copied;
      at += copied;
      if (gathered === BLOCK) send();
    }
  }

  function send(): void {
    const block = gathering as Buffer;
    gathering = null;
    (thread as Worker).postMessage(
      { input: block.buffer as ArrayBuffer, length: gathered } satisfies ToThread,
      [block.buffer as ArrayBuffer],
    );
    gathered = 0;
    inFlight += 1;
  }

  function answer(message: FromThread): void {
    if (over) return;
    if (message.error !== undefined) {
      stream.destroy(failure(message));
      return;
    }
    if (message.took) {
      inFlight -= message.took;
      if (waiting && inFlight < INPUT_IN_FLIGHT) {
        const resume = waiting;
        waiting = null;
        resume();
      }
    }
    if (message.output) received.push(Buffer.from(message.output, 0, message.length));
    if (message.end) received.push(null);
    deliver();
  }

  /** Hands the blocks received to the reader while it wants more, and lets the thread send as many again. */
  function deliver(): void {
    let taken = 0;
    while (wanted && received.length > 0) {
      const next = received.shift() as Buffer | null;
      if (next === null) {
        stop();
        stream.push(null);
        return;
      }
      taken += 1;
      wanted = stream.push(next);
    }
    if (taken > 0) thread?.postMessage({ more: taken } satisfies ToThread);
  }

  return stream;
}
