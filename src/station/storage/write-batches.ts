import type { FileHandle } from 'node:fs/promises';

/** Size of each of the two buffers a chunk's bytes are copied into before one write. */
const BATCH_BYTES = 2 * 1024 * 1024;
/** Bytes that waited this long are written without waiting for a full buffer. */
const IDLE_FLUSH_MS = 100;

/**
 * Writes a chunk's bytes at `start` in 2 MiB writes from two reused buffers: the bytes of each
 * socket read are copied into the current buffer (so the read's own buffer dies young and costs
 * the garbage collector little); a full buffer is written while the other one fills. Bytes that
 * wait longer than IDLE_FLUSH_MS (the client is slow or has stalled) are written anyway, so what
 * arrived is on disk even if the Station dies next. `written` sees each buffer once it is on
 * disk, before the buffer is reused.
 */
export function createWriteBatches(
  handle: FileHandle,
  start: number,
  written: (bytes: Buffer, position: number) => void,
) {
  const buffers = [Buffer.allocUnsafe(BATCH_BYTES), Buffer.allocUnsafe(BATCH_BYTES)];
  let current = 0;
  let fill = 0;
  let position = start;
  let writing: Promise<void> | null = null;
  let failure: unknown = null;
  let timer: NodeJS.Timeout | null = null;

  async function write(bytes: Buffer): Promise<void> {
    let done = 0;
    while (done < bytes.length) {
      // A short write (the disk filling up) continues until it completes or fails (ENOSPC).
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
      done += bytesWritten;
    }
    position += bytes.length;
    written(bytes, position);
  }

  /** Starts writing the current buffer (the other one must be free) and switches to the other. */
  function handOff(): void {
    if (fill === 0 || failure !== null) return;
    const bytes = (buffers[current] as Buffer).subarray(0, fill);
    current = 1 - current;
    fill = 0;
    writing = write(bytes)
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

  function idleFlush(): void {
    timer = null;
    if (writing) timer = setTimeout(idleFlush, IDLE_FLUSH_MS);
    else handOff();
  }

  const check = () => {
    if (failure !== null) throw failure;
  };

  return {
    position: () => position,

    async push(chunk: Buffer): Promise<void> {
      check();
      let at = 0;
      while (at < chunk.length) {
        const copied = chunk.copy(buffers[current] as Buffer, fill, at);
        fill += copied;
        at += copied;
        if (fill === BATCH_BYTES) {
          clearTimer();
          if (writing) await writing;
          check();
          handOff();
        }
      }
      if (fill > 0) timer ??= setTimeout(idleFlush, IDLE_FLUSH_MS);
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
      fill = 0;
    },

    /** Waits for the write in flight, if any. */
    async settled(): Promise<void> {
      clearTimer();
      if (writing) await writing;
    },
  };
}
