import { eq } from 'drizzle-orm';
import { uploadSessions } from '../db/station-tables.ts';
import { unusualReason } from '../services/snapshot-index.ts';
import { timestampMs } from '../services/snapshot-time.ts';
import { SnapshotExists } from '../storage/store-errors.ts';
import { applyRetention } from './retention.ts';
import { markStored, stagedUploadOf } from './sessions.ts';
import { storeRefusal } from './store-refusals.ts';
import { jobKeyOf, type SessionRow, type UploadDeps } from './types.ts';

/**
 * Something outside the Station took the session's name after initiation reserved it: the
 * session and its staging area go, so that initiating again (the same idempotency key) reserves
 * a free name.
 */
async function giveUp(deps: UploadDeps, row: SessionRow): Promise<void> {
  await deps.db.delete(uploadSessions).where(eq(uploadSessions.uploadId, row.uploadId));
  await deps.store.abortStaging(stagedUploadOf(row));
}

/**
 * Makes a complete, checked staging area a stored snapshot: moves it into place under its
 * reserved name (the store never picks another: a taken name is a 409 and the session is
 * given up), indexes it (unusual next to the job's previous snapshot or not), marks the
 * session stored and applies the job's retention. The one way a snapshot enters the index
 * after its bytes arrived: an upload's finalize (finalize.ts) and a replicated copy
 * (copy-in.ts) both end here. `storedAt` is when the snapshot was first stored (a copy keeps
 * the primary's time, so calendar retention sees the history as it was).
 */
export async function registerStaged(
  deps: UploadDeps,
  row: SessionRow,
  sha256: string,
  storedAt?: number,
): Promise<{ filename: string; unusual: string | null; pruned: string[] }> {
  const ref = jobKeyOf(row);
  const previous = await deps.index.newest(ref);
  const stored = await deps.store.complete(stagedUploadOf(row)).catch(async (error: unknown) => {
    if (error instanceof SnapshotExists) await giveUp(deps, row);
    throw storeRefusal(error);
  });
  const now = deps.clock.now();
  const unusual = unusualReason(
    { sizeBytes: row.archiveSizeBytes, keyFingerprint: row.keyFingerprint },
    previous,
  );
  await deps.index.insert({
    scoutId: row.scoutId,
    scoutInstanceId: row.scoutInstanceId,
    jobName: row.jobName,
    filename: stored.filename,
    sizeBytes: row.archiveSizeBytes,
    sha256,
    fingerprint: row.fingerprint,
    keyFingerprint: row.keyFingerprint,
    mtime: stored.mtimeMs || now,
    storedAt: storedAt ?? now,
    takenAt: timestampMs(row.timestamp),
    unusual,
    missing: false,
    lockedUntil: stored.lockedUntil ?? null,
  });
  await markStored(deps, row, stored.filename);
  const pruned = await applyRetention(deps, ref, stored.filename);
  return { filename: stored.filename, unusual, pruned };
}
