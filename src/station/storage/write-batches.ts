import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { logger } from '../../core/log.ts';
import { noteReceived } from '../gc-pacing.ts';
import { noteActivity } from '../idle-collection.ts';
import { type BatchBlock, DIRECT_ALIGN, returnBlock, takeBlock } from './batch-blocks.ts';

const log = logger.child({ mod: 'station/write-batches' });

/** Bytes that waited this long are written without waiting for a full block. */
const IDLE_FLUSH_MS = 100;

/**
 * Whether this process writes staged files with O_DIRECT. Measured on this kind of machine (a
 * virtual machine, 1 GiB in 2 MiB writes): through the page cache the kernel spent 2.4–2.6
 * CPU-seconds copying into freshly faulted page-cache pages (and wrote 80–110 MiB/s); direct from
 * the reused blocks it spent 0.02–0.08 s (760–1250 MiB/s). A staged upload is not read again
 * before finalize, so the cache gains nothing. Filesystems without O_DIRECT (tmpfs on older
 * kernels, some FUSE and network filesystems) refuse it with EINVAL: then this turns off.
 */
let directWrites = process.platform === 'linux';

function directRefused(error: unknown): boolean {
  if ((error as NodeJS.ErrnoException).code !== 'EINVAL' || !directWrites) return false;
  directWrites = false;
  log.info({ err: error }, 'the staging filesystem refuses direct writes; writing through the page cache');
  return true;
}

const alignDown = (n: number) => n - (n % DIRECT_ALIGN);

async function openDirect(path: string): Promise<FileHandle | null> {
  if (!directWrites) return null;
  try {
    return await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_DIRECT);
  } catch (error) {
    if (directRefused(error)) return null;
    throw error;
  }
}

/** Writes all of `bytes` at `position` (a short write, the disk filling up, goes on until ENOSPC). */
async function writeAll(handle: FileHandle, bytes: Buffer, position: number): Promise<number> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
    // A direct write that stopped off the alignment cannot go on directly.
    if (done % DIRECT_ALIGN !== 0 && done < bytes.length) break;
  }
  return done;
}

/**
 * Writes a chunk's bytes to the staged file at `path` from `start`, in 2 MiB writes from two
 * blocks of the Station's pool (batch-blocks.ts): the bytes of each socket read are copied into
 * the current block (so the read's own buffer dies young), and a full block is written while the
 * other one fills. Blocks are written with O_DIRECT where the filesystem allows it (see
 * `directWrites`): each block starts at an aligned file offset (a start inside a 4 KiB block
 * first reads the bytes before it back from the file), and only the unaligned end of the
 * last block of a chunk goes through the page cache. Bytes that wait longer than IDLE_FLUSH_MS
 * (the client is slow or has stalled) are written anyway, so what arrived is in the file even
 * if the Station dies next. `written` sees each block's new bytes once they are in the file,
 * before the block is reused.
 */
export async function openWriteBatches(
  path: string,
  start: number,
  written: (bytes: Buffer, position: number) => void,
) {
  const plain = await open(path, constants.O_RDWR | constants.O_CREAT);
  let direct: FileHandle | null = null;
  const blocks: BatchBlock[] = [];
  try {
    blocks.push(takeBlock(), takeBlock());
    // Direct writes need aligned memory: a block from beyond the pool is not.
    if (blocks.every((b) => b.aligned)) direct = await openDirect(path);
  } catch (error) {
    for (const b of blocks.splice(0)) returnBlock(b);
    await plain.close();
    throw error;
  }
  let current = 0;
  /** File offset of byte 0 of the current block. */
  let base = alignDown(start);
  /** Bytes at the start of the current block that are in the file already (re-written whole). */
  let head = start - base;
  /** Bytes in the current block, the head included. */
  let fill = head;
  let position = start;
  let writing: Promise<void> | null = null;
  let failure: unknown = null;
  let timer: NodeJS.Timeout | null = null;
  const block = (i: number) => (blocks[i] as BatchBlock).bytes;

  let closed = false;
  async function release(): Promise<void> {
    if (closed) return;
    closed = true;
    for (const b of blocks.splice(0)) returnBlock(b);
    await direct?.close().catch(() => {});
    await plain.close().catch(() => {});
  }

  if (head > 0) {
    const { bytesRead } = await plain.read(block(0), 0, head, base).catch(async (error: unknown) => {
      await release();
      throw error;
    });
    if (bytesRead !== head) {
      await release();
      throw new Error(`the staged file is shorter than its ${start} bytes`);
    }
  }

  async function write(bytes: Buffer, at: number, known: number): Promise<void> {
    let done = 0;
    if (direct) {
      try {
        done = await writeAll(direct, bytes.subarray(0, alignDown(bytes.length)), at);
      } catch (error) {
        if (!directRefused(error)) throw error;
        await direct.close().catch(() => {});
        direct = null;
        done = 0;
      }
    }
    done = Math.max(done, known);
    if (done < bytes.length) await writeAll(plain, bytes.subarray(done), at + done);
    position = at + bytes.length;
    written(bytes.subarray(known), position);
  }

  /**
   * Starts writing the current block (the other one must be free) and switches to the other,
   * which starts at the aligned offset below the end: the unaligned rest is carried over.
   */
  function handOff(): void {
    if (fill === head || failure !== null) return;
    const bytes = block(current).subarray(0, fill);
    const at = base;
    const known = head;
    const carry = fill % DIRECT_ALIGN;
    bytes.copy(block(1 - current), 0, fill - carry, fill);
    current = 1 - current;
    base = at + fill - carry;
    head = carry;
    fill = carry;
    startWrite(bytes, at, known);
  }

  function startWrite(bytes: Buffer, at: number, known: number): void {
    writing = write(bytes, at, known)
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => {
        writing = null;
      });
  }

  function clearTimer(): void {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  /**
   * Writes the current block's bytes so far without leaving it (a read straight into its free
   * rest may be under way, socket-reads.ts): they count as in the file (`head`), and the block's
   * next write writes them again with what follows. Reads land only past `fill`, which this
   * write does not touch.
   */
  function flushInPlace(): void {
    if (fill === head || failure !== null) return;
    const bytes = block(current).subarray(0, fill);
    const known = head;
    head = fill;
    startWrite(bytes, base, known);
  }

  function idleFlush(): void {
    timer = null;
    if (writing) timer = setTimeout(idleFlush, IDLE_FLUSH_MS);
    else flushInPlace();
  }

  const check = () => {
    if (failure !== null) throw failure;
  };

  /** `n` bytes more are in the current block (read into it, or copied): hands it off once full. */
  function filled(n: number): Promise<void> | undefined {
    fill += n;
    if (fill < block(current).length) {
      if (fill > head) timer ??= setTimeout(idleFlush, IDLE_FLUSH_MS);
      return undefined;
    }
    clearTimer();
    if (writing) {
      return writing.then(() => {
        check();
        handOff();
      });
    }
    check();
    handOff();
    return undefined;
  }

  /** Copies `chunk` from `at` into the blocks, handing each full one off to be written. */
  function copyFrom(chunk: Buffer, at: number): Promise<void> | undefined {
    for (let from = at; from < chunk.length; ) {
      const copied = chunk.copy(block(current), fill, from);
      from += copied;
      const waiting = filled(copied);
      if (waiting) {
        const rest = from;
        return waiting.then(() => copyFrom(chunk, rest));
      }
    }
    return undefined;
  }

  return {
    /** Bytes of the file that are written (the next offset). */
    position: () => position,

    /**
     * Copies `chunk` into the current block; a promise only when a full block had to wait for
     * the write in flight (the caller pauses its body until then), so most socket reads cost
     * no promise at all (body-pieces.ts).
     */
    push(chunk: Buffer): Promise<void> | undefined {
      check();
      noteReceived(chunk.length);
      return copyFrom(chunk, 0);
    },

    /**
     * The free rest of the current block, for the next read of a body straight into it
     * (socket-reads.ts); null while the block is full and waits for the write in flight.
     */
    room(): Buffer | null {
      const bytes = block(current);
      return fill < bytes.length ? bytes.subarray(fill) : null;
    },

    /**
     * `n` bytes were read into the last `room`: as `push` without the copy (a promise only when
     * the full block waits for the write in flight; no room until it settles).
     */
    took(n: number): Promise<void> | undefined {
      check();
      // No young collection to pace here (no buffer per read), but the upload is under way.
      noteActivity();
      return filled(n);
    },

    /** Writes what is pending and waits for every write. */
    async drain(): Promise<void> {
      clearTimer();
      if (writing) await writing;
      handOff();
      if (writing) await writing;
      check();
    },

    /** Drops what is pending (a refused chunk). */
    stop(): void {
      clearTimer();
      fill = head;
    },

    /** Waits for the write in flight, if any, then gives the blocks back and closes the file. */
    async close(): Promise<void> {
      clearTimer();
      if (writing) await writing;
      await release();
    },
  };
}
