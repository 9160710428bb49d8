import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** Local state of each job, by its folder (relative_path): outcomes and the staged archive. */
export const jobStates = sqliteTable('job_states', {
  relativePath: text('relative_path').primaryKey(),
  jobName: text('job_name').notNull(),
  lastStatus: text('last_status').notNull(),
  lastError: text('last_error'),
  /** The stable code of last_error (src/shared/protocol/error-codes.ts), or null. */
  lastErrorCode: text('last_error_code'),
  lastAttemptAt: integer('last_attempt_at'),
  lastSuccessAt: integer('last_success_at'),
  lastStoredAs: text('last_stored_as'),
  /** Size in bytes of the archive stored as last_stored_as. */
  lastStoredBytes: integer('last_stored_bytes'),
  /** Job fingerprint of the last snapshot the Station stored. */
  storedFingerprint: text('stored_fingerprint'),
  /** JSON of the archive waiting to be uploaded (StagedArchive), or null. */
  staged: text('staged'),
  /** JSON of the last restore drill's outcome (DrillOutcome), or null. */
  lastDrill: text('last_drill'),
  /** JSON of what the last snapshot left out ({count, paths}: src/scout/jobs/skipped.ts), or null. */
  lastSkipped: text('last_skipped'),
});
