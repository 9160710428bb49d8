import { bigint, boolean, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * One row per job with snapshots: the aggregate GET /api/jobs rates and pages
 * (src/station/services/job-summaries.ts). Kept by triggers on `snapshots` in the same
 * transaction as every change (migrations/station/0010_job_summaries.sql), so no writer can
 * forget it: rating 10,000 jobs reads 10,000 rows instead of aggregating 300,000 snapshots,
 * which took PGlite over a second per request.
 */
export const jobSummaries = pgTable(
  'job_summaries',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    /** Present snapshots and their bytes (files missing are counted apart). */
    snapshotCount: integer('snapshot_count').notNull(),
    totalBytes: bigint('total_bytes', { mode: 'number' }).notNull(),
    missingCount: integer('missing_count').notNull(),
    unusualCount: integer('unusual_count').notNull(),
    protectedCount: integer('protected_count').notNull(),
    /** When the newest and the oldest present snapshot were stored (ms); null without one. */
    newestStoredAt: bigint('newest_stored_at', { mode: 'number' }),
    oldestStoredAt: bigint('oldest_stored_at', { mode: 'number' }),
    /** The newest present snapshot (by its own time) is unusual. */
    newestUnusual: boolean('newest_unusual'),
  },
  (t) => [primaryKey({ columns: [t.scoutId, t.scoutInstanceId, t.jobName] })],
);
