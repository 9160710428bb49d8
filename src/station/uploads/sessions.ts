import { and, eq, ne } from 'drizzle-orm';
import { forbidden, notFound } from '../../core/errors.ts';
import { snapshotFileName } from '../../shared/protocol/snapshot-names.ts';
import type { InitiateReply } from '../../shared/protocol/uploads.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import type { StagedUpload } from '../storage/storage.ts';
import { type JobKey, jobKeyOf, type SessionRow, type UploadDeps } from './types.ts';

/**
 * A streamed upload whose size and SHA-256 are not yet declared (they come at finalize): its
 * `archiveSizeBytes` is only the most it may receive, its `archiveSha256` empty.
 */
export const openStream = (row: SessionRow): boolean => row.streamed === true && row.archiveSha256 === '';

/**
 * The size a session's chunks (a bucket's parts) are chosen for. A streamed upload's size is
 * not known: it is planned at 4× what it reserved (its job's newest snapshot), within its limit,
 * so a job under ~156 GiB gets the smallest parts (16 MiB, each held in memory while it
 * arrives) instead of parts for MAX_UPLOAD_BYTES; one that outgrows 10,000 parts is 413.
 */
export const plannedSize = (row: SessionRow): number =>
  row.streamed ? Math.min(row.archiveSizeBytes, 4 * (row.reservedBytes ?? 0)) : row.archiveSizeBytes;

/** The upload's staging area as the store knows it (sessions older than 0006 had no reserved name). */
export function stagedUploadOf(row: SessionRow): StagedUpload {
  return {
    uploadId: row.uploadId,
    target: {
      ...jobKeyOf(row),
      filename: row.targetName ?? snapshotFileName(row.jobName, row.timestamp, row.fingerprint),
    },
    sizeBytes: row.archiveSizeBytes,
    state: row.storeState,
  };
}

/** The session `uploadId` of `token` (404 when unknown, 403 when another token's). */
export async function sessionOf(
  deps: UploadDeps,
  uploadId: string,
  token: StationTokenRow,
): Promise<SessionRow> {
  const [row] = await deps.db.select().from(uploadSessions).where(eq(uploadSessions.uploadId, uploadId));
  if (!row) throw notFound(`no upload session ${uploadId}; initiate the upload again`);
  if (row.tokenHash !== token.tokenHash)
    throw forbidden('this upload session belongs to another Station token');
  return row;
}

/** Unfinished sessions of one Scout instance and job. */
export function liveSessionsOf(deps: UploadDeps, ref: JobKey): Promise<SessionRow[]> {
  return deps.db
    .select()
    .from(uploadSessions)
    .where(
      and(
        ne(uploadSessions.status, 'stored'),
        eq(uploadSessions.scoutId, ref.scoutId),
        eq(uploadSessions.scoutInstanceId, ref.instanceId),
        eq(uploadSessions.jobName, ref.jobName),
      ),
    );
}

/** The name a stored session's snapshot has: a session becomes `stored` only with it (markStored, initiate). */
export function storedNameOf(row: SessionRow): string {
  if (row.storedAs === null) throw new Error(`upload ${row.uploadId} is stored without a snapshot name`);
  return row.storedAs;
}

/** `streamed: true` in the answers about a streamed upload (absent for a plain one, as before). */
const streamedField = (row: SessionRow) => (row.streamed ? { streamed: true } : {});

export function storedReply(deps: UploadDeps, row: SessionRow, duplicate: boolean): InitiateReply {
  return {
    upload_id: row.uploadId,
    status: 'stored',
    next_offset: row.archiveSizeBytes,
    archive_size_bytes: row.archiveSizeBytes,
    recommended_chunk_size_bytes: deps.store.chunkSizeFor(plannedSize(row)),
    pruned: [],
    duplicate,
    stored_as: storedNameOf(row),
    ...streamedField(row),
  };
}

export async function progressReply(deps: UploadDeps, row: SessionRow): Promise<InitiateReply> {
  const next = await deps.store.stagedBytes(stagedUploadOf(row));
  const open = openStream(row);
  return {
    upload_id: row.uploadId,
    status: !open && next >= row.archiveSizeBytes ? 'complete' : 'receiving',
    next_offset: next,
    archive_size_bytes: open ? null : row.archiveSizeBytes,
    recommended_chunk_size_bytes: deps.store.chunkSizeFor(plannedSize(row)),
    pruned: [],
    duplicate: false,
    ...streamedField(row),
  };
}

/** Marks the session stored as `storedAs` (its staging area was completed or aborted). */
export async function markStored(deps: UploadDeps, row: SessionRow, storedAs: string): Promise<SessionRow> {
  const [updated] = await deps.db
    .update(uploadSessions)
    .set({ status: 'stored', storedAs, storeState: null, updatedAt: deps.clock.now() })
    .where(eq(uploadSessions.uploadId, row.uploadId))
    .returning();
  return updated ?? { ...row, status: 'stored', storedAs };
}
