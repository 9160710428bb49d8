import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { truncate } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { AppError, badRequest } from '../../core/errors.ts';
import { eachPiece } from './body-pieces.ts';
import { socketReadsOf } from './socket-reads.ts';
import { openWriteBatches } from './write-batches.ts';

/** The SHA-256 of a staged file's first `offset` bytes, kept while the bytes arrive. */
interface RunningHash {
  hash: Hash;
  offset: number;
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
      const batches = await openWriteBatches(path, offset, (bytes, at) => {
        state.hash.update(bytes);
        state.offset = at;
      });
      let received = 0;
      try {
        try {
          const count = (n: number) => {
            received += n;
            if (received > room) throw badRequest(`chunk runs past archive_size_bytes (${offset + room})`);
          };
          const reads = socketReadsOf(body);
          if (reads) {
            await reads({
              room: () => batches.room(),
              took: (n) => {
                count(n);
                return batches.took(n);
              },
            });
          } else {
            await eachPiece(body, (piece) => {
              count(piece.length);
              return batches.push(piece);
            });
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
          await batches.close();
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
        await batches.close();
      }
      return { kept: batches.position() - offset };
    },
  };
}
