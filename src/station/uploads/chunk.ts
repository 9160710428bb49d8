import type { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { AppError, badRequest, conflict, payloadTooLarge } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { ChunkReply } from '../../shared/protocol/uploads.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import type { AppendResult } from '../storage/storage.ts';
import { StagedOffsetMismatch } from '../storage/store-errors.ts';
import { openStream, sessionOf, stagedUploadOf } from './sessions.ts';
import { storeRefusal } from './store-refusals.ts';
import type { SessionRow, UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/uploads' });

/**
 * A chunk that changes nothing but the session's last activity (the disk store keeps no state)
 * saves it at most this often: what reads it counts in hours (RESERVATION_IDLE_MS,
 * ABANDONED_AFTER_MS in types.ts), and a write per chunk was about a millisecond of the
 * Station's CPU on PGlite (bench/station.ts).
 */
export const TOUCH_EVERY_MS = 60_000;

const offsetMismatch = (next: number, message: string) =>
  conflict({ status: 'offset_mismatch', next_offset: next, message });

/** A streamed upload that runs past this Station's limit is too large (413), not a bad chunk. */
const overrun = (row: SessionRow, error: AppError, limit: number): AppError =>
  openStream(row) && error.status === 400
    ? payloadTooLarge(`the archive exceeds this Station's limit of ${limit} bytes (MAX_UPLOAD_BYTES)`)
    : error;

/**
 * Appends one chunk at `offset` (which must be the bytes received so far). Chunks of one
 * upload run one at a time on every Station (the upload's lease); an interrupted chunk keeps
 * what arrived, a chunk that runs past the declared size keeps nothing.
 */
export async function chunk(
  deps: UploadDeps,
  token: StationTokenRow,
  uploadId: string,
  offset: number,
  body: Readable,
): Promise<ChunkReply> {
  const busy = async () => {
    const row = await sessionOf(deps, uploadId, token);
    const next = await deps.store.stagedBytes(stagedUploadOf(row));
    return offsetMismatch(next, 'another chunk of this upload is being written; resume from next_offset');
  };
  return deps.lock(
    uploadId,
    async (hold) => {
      const row = await sessionOf(deps, uploadId, token);
      if (row.status === 'stored') {
        throw conflict(
          { status: 'stored', next_offset: row.archiveSizeBytes, message: 'upload already stored' },
          'already_stored',
        );
      }
      const upload = stagedUploadOf(row);
      const next = await deps.store.stagedBytes(upload);
      if (offset !== next) {
        throw offsetMismatch(
          next,
          `chunk offset ${offset} does not match the ${next} bytes received; resume from next_offset`,
        );
      }
      let result: AppendResult;
      try {
        result = await deps.store.append(upload, offset, hold.guard(body));
      } catch (error) {
        if (error instanceof AppError) throw overrun(row, error, deps.maxUploadBytes);
        if (error instanceof StagedOffsetMismatch) throw storeRefusal(error);
        result = { stagedBytes: next, keptBytes: 0, state: row.storeState, interrupted: error };
      }
      // Only received bytes keep a session alive: empty chunks do not postpone the sweep.
      const now = deps.clock.now();
      const touch = result.keptBytes > 0 && now - row.updatedAt >= TOUCH_EVERY_MS;
      if (touch || result.state !== row.storeState) {
        await hold.confirm();
        await deps.db
          .update(uploadSessions)
          .set({ storeState: result.state, ...(result.keptBytes > 0 ? { updatedAt: now } : {}) })
          .where(eq(uploadSessions.uploadId, uploadId));
      }
      if (result.interrupted !== undefined) {
        log.warn(
          { upload_id: uploadId, err: result.interrupted, kept: result.keptBytes },
          'chunk interrupted',
        );
        throw badRequest('chunk body ended early; resume from next_offset');
      }
      return {
        upload_id: uploadId,
        status: result.stagedBytes >= row.archiveSizeBytes ? 'complete' : 'receiving',
        next_offset: result.stagedBytes,
        received_bytes: result.keptBytes,
      };
    },
    busy,
  );
}
