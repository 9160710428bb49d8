import { eq } from 'drizzle-orm';
import { conflict } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { FinalizeReply } from '../../shared/protocol/uploads.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import { registerStaged } from './register.ts';
import { sessionOf, stagedUploadOf, storedNameOf } from './sessions.ts';
import type { SessionRow, UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/uploads' });

/** A checksum mismatch: the staged bytes are discarded and the upload starts again at 0. */
async function discard(
  deps: UploadDeps,
  row: SessionRow,
  facts: Record<string, string | number>,
): Promise<Error> {
  const reset = await deps.store.resetStaging(stagedUploadOf(row));
  await deps.db
    .update(uploadSessions)
    .set({ storeState: reset.state })
    .where(eq(uploadSessions.uploadId, row.uploadId));
  deps.events?.failed(facts, 'the received bytes did not match archive_sha256');
  return conflict({
    status: 'checksum_mismatch',
    next_offset: 0,
    message:
      'the received bytes do not match archive_sha256; they were discarded, upload again from offset 0',
  });
}

/**
 * Stores a complete upload: checks its SHA-256 (computed while the bytes arrived), moves it
 * into place under its reserved name, indexes it and applies the job's retention.
 */
export async function finalize(
  deps: UploadDeps,
  token: StationTokenRow,
  uploadId: string,
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
      const upload = stagedUploadOf(row);
      const size = await deps.store.stagedBytes(upload);
      if (size !== row.archiveSizeBytes) {
        throw conflict({
          status: 'incomplete',
          next_offset: size,
          message: `${size} of ${row.archiveSizeBytes} bytes received; send the rest before finalizing`,
        });
      }
      const sha = await deps.store.stagedSha256(upload);
      const facts = {
        scout_id: row.scoutId,
        scout_instance_id: row.scoutInstanceId,
        job_name: row.jobName,
        size_bytes: size,
        upload_id: row.uploadId,
      };
      await hold.confirm();
      if (sha !== row.archiveSha256) throw await discard(deps, row, facts);
      await deps.events?.beforeStore(facts);
      await hold.confirm();
      const { filename, unusual, pruned } = await registerStaged(deps, row, sha);
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
