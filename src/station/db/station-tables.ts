import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

/** Station tokens by hash; the token text itself is never stored. */
export const stationTokens = pgTable('station_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  shared: boolean('shared').notNull(),
  maxRegistrations: integer('max_registrations').notNull(),
});

/** Which Scout instances a token is bound to (one, or up to max_registrations when shared). */
export const tokenBindings = pgTable(
  'token_bindings',
  {
    tokenHash: text('token_hash')
      .notNull()
      .references(() => stationTokens.tokenHash, { onDelete: 'cascade' }),
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    boundAt: bigint('bound_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tokenHash, t.scoutId, t.scoutInstanceId] }),
    index('token_bindings_instance_idx').on(t.scoutId, t.scoutInstanceId),
  ],
);

/** What the Station knows of each Scout instance that uploaded. */
export const instances = pgTable(
  'instances',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    keyFingerprint: text('key_fingerprint'),
    advertisedUrl: text('advertised_url'),
    firstSeenAt: bigint('first_seen_at', { mode: 'number' }).notNull(),
    lastSeenAt: bigint('last_seen_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scoutId, t.scoutInstanceId] })],
);

export const uploadSessions = pgTable(
  'upload_sessions',
  {
    uploadId: text('upload_id').primaryKey(),
    idempotencyKey: text('idempotency_key').notNull(),
    tokenHash: text('token_hash').notNull(),
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    fingerprint: text('fingerprint').notNull(),
    timestamp: text('timestamp').notNull(),
    /**
     * What the Scout declared. A streamed upload (`streamed`) declares them at finalize: until
     * then `archive_size_bytes` is the most it may receive (MAX_UPLOAD_BYTES at initiation) and
     * `archive_sha256` is empty (src/station/uploads/sessions.ts, `openStream`).
     */
    archiveSizeBytes: bigint('archive_size_bytes', { mode: 'number' }).notNull(),
    archiveSha256: text('archive_sha256').notNull(),
    keyFingerprint: text('key_fingerprint'),
    status: text('status').notNull(),
    storedAs: text('stored_as'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
    /** The file name reserved at initiation (`-2`, `-3` when taken); null for older sessions. */
    targetName: text('target_name'),
    /** The store's state of the staging area (the S3 multipart upload); null on disk. */
    storeState: text('store_state'),
    /** Who writes to the upload now (a chunk or finalize) and until when: see uploads/upload-lease.ts. */
    lockOwner: text('lock_owner'),
    lockUntil: bigint('lock_until', { mode: 'number' }),
    /** A streamed upload (size and SHA-256 given at finalize); null for a plain one. */
    streamed: boolean('streamed'),
    /**
     * The space a streamed upload holds while bytes arrive (its job's newest snapshot's size at
     * initiation, see uploads/space.ts); null for a plain upload, which holds its declared size.
     */
    reservedBytes: bigint('reserved_bytes', { mode: 'number' }),
  },
  (t) => [uniqueIndex('upload_sessions_idempotency_idx').on(t.idempotencyKey)],
);

/** The snapshot index. The files under BACKUP_ROOT are the truth; this follows them. */
export const snapshots = pgTable(
  'snapshots',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    filename: text('filename').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    fingerprint: text('fingerprint').notNull(),
    keyFingerprint: text('key_fingerprint'),
    mtime: bigint('mtime', { mode: 'number' }).notNull(),
    storedAt: bigint('stored_at', { mode: 'number' }).notNull(),
    /** The snapshot's own time (the initiation's `timestamp`, ms): what order and retention follow. */
    takenAt: bigint('taken_at', { mode: 'number' }).notNull().default(0),
    unusual: text('unusual'),
    missing: boolean('missing').notNull().default(false),
    /** Set by an admin: retention never deletes it and a manual delete is refused (409). */
    protected: boolean('protected').notNull().default(false),
    /** The store's object-lock retention date (ms) on an object-locked bucket, else null. */
    lockedUntil: bigint('locked_until', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ columns: [t.scoutId, t.scoutInstanceId, t.jobName, t.filename] }),
    index('snapshots_job_idx').on(t.scoutId, t.scoutInstanceId, t.jobName, t.takenAt),
    index('snapshots_sha_idx').on(t.scoutId, t.scoutInstanceId, t.jobName, t.sha256).where(sql`NOT missing`),
  ],
);

/**
 * A job's retention overrides (JSON: the `retention_*` fields it sets; the rest follow the
 * Station's settings). See src/station/services/retention-policy.ts.
 */
export const jobRetention = pgTable(
  'job_retention',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    overrides: text('overrides').notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scoutId, t.scoutInstanceId, t.jobName] })],
);

/** Restore requests: an admin asks a Scout instance to restore a stored snapshot. */
export const restoreRequests = pgTable(
  'restore_requests',
  {
    id: text('id').primaryKey(),
    sourceScoutId: text('source_scout_id').notNull(),
    sourceInstanceId: text('source_instance_id').notNull(),
    targetScoutId: text('target_scout_id').notNull(),
    targetInstanceId: text('target_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    filename: text('filename').notNull(),
    status: text('status').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('restore_requests_target_idx').on(t.targetScoutId, t.targetInstanceId, t.createdAt)],
);

/** The last restore drill each Scout job reported (POST /backup/drills/…). */
export const drills = pgTable(
  'drills',
  {
    scoutId: text('scout_id').notNull(),
    scoutInstanceId: text('scout_instance_id').notNull(),
    jobName: text('job_name').notNull(),
    filename: text('filename').notNull(),
    status: text('status').notNull(),
    files: bigint('files', { mode: 'number' }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    error: text('error'),
    finishedAt: bigint('finished_at', { mode: 'number' }).notNull(),
    recordedAt: bigint('recorded_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scoutId, t.scoutInstanceId, t.jobName] })],
);

/**
 * Keys every Station on the database shares, by name (`token_signing`: the Ed25519 key that
 * signs Station tokens, PKCS#8 PEM). Written once by the first Station that needs it.
 */
export const stationKeys = pgTable('station_keys', {
  name: text('name').primaryKey(),
  pem: text('pem').notNull(),
  createdAt: bigint('created_at', { mode: 'number' }).notNull(),
});

/** Fixed-window counters of the rate limits (sign-in failures, API requests), by key. */
export const rateWindows = pgTable(
  'rate_windows',
  {
    key: text('key').primaryKey(),
    windowStart: bigint('window_start', { mode: 'number' }).notNull(),
    windowEnd: bigint('window_end', { mode: 'number' }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [index('rate_windows_end_idx').on(t.windowEnd)],
);

/** Who runs a Station-wide job (the upload sweep, a verification) until when (ms, database clock). */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  until: bigint('until', { mode: 'number' }).notNull(),
});
