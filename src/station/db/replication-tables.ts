import { bigint, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * On a replica Station: each snapshot of the primary it copied, kept after the replica's own
 * retention pruned the copy, so a pruned copy is never pulled again
 * (src/station/replication/replicator.ts).
 */
export const replicationCopies = pgTable(
  'replication_copies',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    filename: text('filename').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    copiedAt: bigint('copied_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scoutId, t.scoutInstanceId, t.jobName, t.filename] })],
);

/**
 * On a primary Station: which replicas (automation tokens with the `replicate` scope) pulled,
 * when, and how much (src/station/replication/pulls.ts).
 */
export const replicationPulls = pgTable('replication_pulls', {
  tokenId: text('token_id').primaryKey(),
  tokenName: text('token_name').notNull(),
  firstPullAt: bigint('first_pull_at', { mode: 'number' }).notNull(),
  lastListAt: bigint('last_list_at', { mode: 'number' }),
  lastDownloadAt: bigint('last_download_at', { mode: 'number' }),
  downloads: bigint('downloads', { mode: 'number' }).notNull().default(0),
  bytesServed: bigint('bytes_served', { mode: 'number' }).notNull().default(0),
});
