import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { type FileHandle, open, truncate } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { AppError, badRequest } from '../../core/errors.ts';

/** Bytes gathered before one `writev`: few large writes instead of one per socket read. */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes that waited this long are written without waiting for a full batch. */
const IDLE_FLUSH_MS = 100;

/** The SHA-256 of a staged file's first `offset` bytes, kept while the bytes arrive. */
interface RunningHash {
  hash: Hash;
  offset: number;
}

/**
 * Gathers a chunk's buffers into batches written with one `writev` each (WRITE_BATCH_BYTES),
 * one batch at a time. Bytes that wait longer than IDLE_FLUSH_MS (the client is slow or has
 * stalled) are written anyway, so what arrived is on disk even if the Station dies next.
 */
function createBatches(
  handle: FileHandle,
  start: number,
  written: (buffers: Buffer[], position: number) => void,
) {
  let position = start;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let queue: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  let timer: NodeJS.Timeout | null = null;

  async function write(): Promise<void> {
    if (pendingBytes === 0 || failure !== null) return;
    const batch = pending;
    pending = [];
    pendingBytes = 0;
    let left = batch;
    let at = position;
    while (left.length > 0) {
      // A short write (the disk filling up) continues until it completes or fails (ENOSPC).
      const { bytesWritten } = await handle.writev(left, at);
      at += bytesWritten;
      left = dropBytes(left, bytesWritten);
    }
    position = at;
    written(batch, position);
  }

  function enqueue(): Promise<void> {
    queue = queue.then(write).catch((error: unknown) => {
      failure ??= error;
    });
    return queue;
  }

  function clearTimer(): void {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  const failed = () => {
    if (failure !== null) throw failure;
  };

  return {
    position: () => position,
    async push(buffer: Buffer): Promise<void> {
      failed();
      pending.push(buffer);
      pendingBytes += buffer.length;
      clearTimer();
      if (pendingBytes >= WRITE_BATCH_BYTES) {
        await enqueue();
        failed();
      } else timer = setTimeout(enqueue, IDLE_FLUSH_MS);
    },
    /** Writes what is pending and waits for every write. */
    async drain(): Promise<void> {
      clearTimer();
      await enqueue();
      failed();
    },
    /** Drops what is pending (a refused chunk). */
    stop(): void {
      clearTimer();
      pending = [];
      pendingBytes = 0;
    },
    async settled(): Promise<void> {
      clearTimer();
      await queue;
    },
  };
}

/** `buffers` without their first `count` bytes. */
function dropBytes(buffers: Buffer[], count: number): Buffer[] {
  const rest: Buffer[] = [];
  let skip = count;
  for (const buffer of buffers) {
    if (skip >= buffer.length) skip -= buffer.length;
    else {
      rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
  }
  return rest;
}

/** SHA-256 of the first `length` bytes of a file (re-hashing after a restart). */
async function hashPrefix(path: string, length: number): Promise<Hash> {
  const hash = createHash('sha256');
  if (length === 0) return hash;
  const stream = createReadStream(path, { start: 0, end: length - 1, highWaterMark: 1024 * 1024 });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash;
}

/**
 * Appends to staged files and hashes the bytes as they are written, so that finalize does not
 * read the file again. The running hash lives in this process only: after a restart (or when
 * another Station wrote the earlier bytes) the first append re-hashes what was staged, and
 * `sha256` re-hashes the whole file when the running hash does not cover it.
 */
export function createStagedWriter() {
  const running = new Map<string, RunningHash>();

  async function hashAt(id: string, path: string, offset: number): Promise<RunningHash> {
    const known = running.get(id);
    if (known?.offset === offset) return known;
    const fresh = { hash: await hashPrefix(path, offset), offset };
    running.set(id, fresh);
    return fresh;
  }

  return {
    forget(id: string): void {
      running.delete(id);
    },

    /** SHA-256 hex of the staged file of `size` bytes. */
    async sha256(id: string, path: string, size: number): Promise<string> {
      const known = running.get(id);
      if (known?.offset === size) return known.hash.copy().digest('hex');
      return (await hashPrefix(path, size)).digest('hex');
    },

    /**
     * Writes `body` at `offset`; at most `room` bytes. A body longer than that is refused and
     * nothing of it is kept (400); a full disk answers 507 and keeps what was written; a body
     * that fails (the client went away) keeps what arrived and is reported as `interrupted`.
     */
    async append(
      id: string,
      path: string,
      offset: number,
      body: Readable,
      room: number,
    ): Promise<{ kept: number; interrupted?: unknown }> {
      const state = await hashAt(id, path, offset);
      const before = state.hash.copy();
      const handle = await open(path, constants.O_RDWR | constants.O_CREAT);
      const batches = createBatches(handle, offset, (written, at) => {
        for (const buffer of written) state.hash.update(buffer);
        state.offset = at;
      });
      let received = 0;
      try {
        try {
          for await (const chunk of body) {
            const buffer = chunk as Buffer;
            received += buffer.length;
            if (received > room) throw badRequest(`chunk runs past archive_size_bytes (${offset + room})`);
            await batches.push(buffer);
          }
          await batches.drain();
        } catch (error) {
          if (error instanceof AppError || (error as NodeJS.ErrnoException).code === 'ENOSPC') throw error;
          // The client went away: what arrived is kept.
          await batches.drain();
          return { kept: batches.position() - offset, interrupted: error };
        }
      } catch (error) {
        batches.stop();
        if (error instanceof AppError) {
          // A rejected chunk leaves no trace.
          await batches.settled();
          await truncate(path, offset);
          running.set(id, { hash: before, offset });
          throw error;
        }
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          throw new AppError(
            507,
            'the staging disk is full; the bytes received so far are kept, resume from next_offset once space is free',
          );
        }
        throw error;
      } finally {
        await batches.settled();
        await handle.close().catch(() => {});
      }
      return { kept: batches.position() - offset };
    },
  };
}
