import { ne } from 'drizzle-orm';
import { AppError } from '../../core/errors.ts';
import { uploadSessions } from '../db/station-tables.ts';
import { openStream, stagedUploadOf } from './sessions.ts';
import { RESERVATION_IDLE_MS, type UploadDeps } from './types.ts';

const IDLE_MINUTES = RESERVATION_IDLE_MS / 60_000;

/**
 * Space held for uploads: the bytes still to arrive of every unfinished session that received
 * bytes within RESERVATION_IDLE_MS, split into the asking token's and everyone else's. A
 * streamed upload's size is not known before finalize: it holds what it reserved at initiation
 * (its job's newest snapshot's size, initiate.ts) less what arrived.
 * Sessions about to be superseded (`ignore`) hold nothing.
 */
export async function reservedBytes(deps: UploadDeps, token: string, ignore: ReadonlySet<string>) {
  const live = await deps.db.select().from(uploadSessions).where(ne(uploadSessions.status, 'stored'));
  const since = deps.clock.now() - RESERVATION_IDLE_MS;
  const reserved = { own: 0, ownUploads: 0, others: 0 };
  for (const row of live) {
    if (ignore.has(row.uploadId) || row.updatedAt < since) continue;
    const holds = openStream(row) ? (row.reservedBytes ?? 0) : row.archiveSizeBytes;
    const bytes = Math.max(0, holds - (await deps.store.stagedBytes(stagedUploadOf(row))));
    if (row.tokenHash === token) {
      reserved.own += bytes;
      reserved.ownUploads += 1;
    } else reserved.others += bytes;
  }
  return reserved;
}

/**
 * Refuses an upload that cannot fit (507). What one token may hold is bounded three ways: one
 * live session per instance and job (a new one supersedes the old), a reservation lapses when
 * its bytes stop arriving (RESERVATION_IDLE_MS), and a token's own unfinished uploads count
 * against it first, so the detail says whose reservation is in the way. A store without a
 * space limit (a bucket) is not checked.
 */
export async function checkSpace(
  deps: UploadDeps,
  token: string,
  size: number,
  ignore: ReadonlySet<string>,
): Promise<void> {
  if (!deps.store.space) return;
  let space: Awaited<ReturnType<NonNullable<typeof deps.store.space>>>;
  try {
    space = await deps.store.space();
  } catch (cause) {
    throw new AppError(507, 'could not check free disk space for staging', { cause });
  }
  const free = space.stagingFree ?? Number.POSITIVE_INFINITY;
  const reserved = await reservedBytes(deps, token, ignore);
  if (free < size + reserved.others) {
    throw new AppError(
      507,
      `not enough staging space: ${size} bytes declared, ${free} free, ${reserved.others} reserved by uploads of other Station tokens (a reservation lapses after ${IDLE_MINUTES} minutes without bytes); try again later`,
    );
  }
  if (free < size + reserved.own + reserved.others) {
    throw new AppError(
      507,
      `not enough staging space: ${size} bytes declared, ${free} free, ${reserved.own} reserved by ${reserved.ownUploads} other unfinished upload(s) of this Station token; finish them first or let them lapse (${IDLE_MINUTES} minutes without bytes)`,
    );
  }
  if (!space.sameDevice && space.storedFree !== null && space.storedFree < size) {
    throw new AppError(
      507,
      `not enough space in BACKUP_ROOT: ${size} bytes declared, ${space.storedFree} free`,
    );
  }
}
