import { and, eq, ne } from 'drizzle-orm';
import { logger } from '../../core/log.ts';
import { uploadSessions } from '../db/station-tables.ts';
import { stagedUploadOf } from './sessions.ts';
import type { SessionRow, UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/uploads' });

/**
 * One live session per instance and job: once a new upload of theirs exists, the older
 * unfinished ones (`candidates`, read before it was made) are aborted and their staging areas
 * removed. Older means (createdAt, uploadId) below the new session's, so two racing
 * initiations never abort each other (both may stay until the job's next initiation).
 * A chunk in flight finishes before its staging area goes (it holds the upload's lease).
 */
export async function supersede(deps: UploadDeps, candidates: SessionRow[], kept: SessionRow): Promise<void> {
  const older = candidates.filter(
    (row) =>
      row.uploadId !== kept.uploadId &&
      (row.createdAt < kept.createdAt || (row.createdAt === kept.createdAt && row.uploadId < kept.uploadId)),
  );
  let removed = 0;
  for (const row of older) {
    await deps
      .lock(
        row.uploadId,
        async () => {
          const [gone] = await deps.db
            .delete(uploadSessions)
            .where(and(eq(uploadSessions.uploadId, row.uploadId), ne(uploadSessions.status, 'stored')))
            .returning();
          if (!gone) return;
          await deps.store.abortStaging(stagedUploadOf(gone));
          removed += 1;
        },
        async () => new Error('superseded upload is busy'),
      )
      .catch((err: unknown) => log.warn({ upload_id: row.uploadId, err }, 'could not supersede an upload'));
  }
  if (removed > 0) {
    log.info(
      {
        scout_id: kept.scoutId,
        scout_instance_id: kept.scoutInstanceId,
        job_name: kept.jobName,
        count: removed,
      },
      'superseded unfinished uploads of the job',
    );
  }
}
