import { eq } from 'drizzle-orm';
import { badRequest, conflict } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { FinalizeReply, FinalizeRequest } from '../../shared/protocol/uploads.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import { registerStaged } from './register.ts';
import { openStream, sessionOf, stagedUploadOf, storedNameOf } from './sessions.ts';
import type { SessionRow, UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/uploads' });

/** A mismatch: the staged bytes are discarded and the upload starts again at 0. */
async function discard(
  deps: UploadDeps,
  row: SessionRow,
  facts: Record<string, string | number>,
  status: 'checksum_mismatch' | 'size_mismatch',
  why: string,
): Promise<Error> {
  const reset = await deps.store.resetStaging(stagedUploadOf(row));
  await deps.db
    .update(uploadSessions)
    .set({ storeState: reset.state })
    .where(eq(uploadSessions.uploadId, row.uploadId));
  deps.events?.failed(facts, why);
  return conflict({
    status,
    next_offset: 0,
    message: `${why}; they were discarded, upload again from offset 0`,
  });
}

/**
 * What finalize checks the received bytes against: what initiation declared, or (a streamed
 * upload) what finalize declares now. A plain upload may repeat its declaration (it must match).
 */
function expectedOf(row: SessionRow, declared: FinalizeRequest): { size: number; sha256: string } {
  const given =
    declared.archive_size_bytes !== undefined && declared.archive_sha256 !== undefined
      ? { size: declared.archive_size_bytes, sha256: declared.archive_sha256 }
      : null;
  if (openStream(row)) {
    if (given) return given;
    throw badRequest(
      'a streamed upload is finalized with its archive_size_bytes and archive_sha256 (JSON body)',
    );
  }
  if (given && (given.size !== row.archiveSizeBytes || given.sha256 !== row.archiveSha256))
    throw conflict('archive_size_bytes/archive_sha256 differ from what initiation declared');
  return { size: row.archiveSizeBytes, sha256: row.archiveSha256 };
}

/** A streamed upload's declaration, kept once its bytes matched: the session is a plain one from here. */
async function settle(deps: UploadDeps, row: SessionRow, size: number, sha256: string): Promise<SessionRow> {
  if (!openStream(row)) return row;
  await deps.db
    .update(uploadSessions)
    .set({ archiveSizeBytes: size, archiveSha256: sha256 })
    .where(eq(uploadSessions.uploadId, row.uploadId));
  return { ...row, archiveSizeBytes: size, archiveSha256: sha256 };
}

/**
 * Stores a complete upload: checks its size and SHA-256 (computed while the bytes arrived),
 * moves it into place under its reserved name, indexes it and applies the job's retention.
 * A streamed upload is checked against `declared` (size_mismatch: fewer bytes are kept for the
 * rest to follow, more are discarded; checksum_mismatch: discarded).
 */
export async function finalize(
  deps: UploadDeps,
  token: StationTokenRow,
  uploadId: string,
  declared: FinalizeRequest = {},
): Promise<FinalizeReply> {
  const busy = async () => {
    const row = await sessionOf(deps, uploadId, token);
    const next = await deps.store.stagedBytes(stagedUploadOf(row));
    return conflict({
      status: 'incomplete',
      next_offset: next,
      message: 'a chunk of this upload is still being written; retry',
    });
  };
  return deps.lock(
    uploadId,
    async (hold) => {
      const row = await sessionOf(deps, uploadId, token);
      if (row.status === 'stored') {
        return { status: 'stored', stored_as: storedNameOf(row), pruned: [], duplicate: false };
      }
      const expected = expectedOf(row, declared);
      const upload = stagedUploadOf(row);
      const size = await deps.store.stagedBytes(upload);
      const facts = {
        scout_id: row.scoutId,
        scout_instance_id: row.scoutInstanceId,
        job_name: row.jobName,
        size_bytes: size,
        upload_id: row.uploadId,
      };
      if (size < expected.size) {
        throw conflict({
          status: openStream(row) ? 'size_mismatch' : 'incomplete',
          next_offset: size,
          message: `${size} of ${expected.size} bytes received; send the rest before finalizing`,
        });
      }
      if (size > expected.size) {
        await hold.confirm();
        const why = `${size} bytes were received, not archive_size_bytes ${expected.size}`;
        throw await discard(deps, row, facts, 'size_mismatch', why);
      }
      const sha = await deps.store.stagedSha256(upload);
      await hold.confirm();
      if (sha !== expected.sha256) {
        const why = 'the received bytes did not match archive_sha256';
        throw await discard(deps, row, facts, 'checksum_mismatch', why);
      }
      await deps.events?.beforeStore(facts);
      await hold.confirm();
      const settled = await settle(deps, row, size, sha);
      const { filename, unusual, pruned } = await registerStaged(deps, settled, sha);
      log.info({ stored_as: filename, bytes: size, pruned: pruned.length, unusual }, 'snapshot stored');
      deps.events?.stored({
        ...facts,
        filename,
        unusual: unusual ?? '',
        pruned: pruned.length,
      });
      return {
        status: 'stored',
        stored_as: filename,
        pruned,
        duplicate: false,
        ...(unusual ? { unusual: true, unusual_reason: unusual } : {}),
      };
    },
    busy,
  );
}
