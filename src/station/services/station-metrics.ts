import { eq, sql } from 'drizzle-orm';
import type { MiddlewareHandler } from 'hono';
import { Gauge } from 'prom-client';
import { clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { createMetricsRegistry, metricsIn, type RoleMetrics } from '../../core/http/routes/metrics.ts';
import { logger } from '../../core/log.ts';
import type { VerifyResult } from '../../shared/protocol/snapshots.ts';
import type { StationDb } from '../db/open.ts';
import { snapshots } from '../db/station-tables.ts';

const log = logger.child({ mod: 'station/metrics' });

/** The labels of a per-job family (also src/station/replication/replication-metrics.ts). */
export const JOB_LABELS = ['scout_id', 'scout_instance_id', 'job_name'] as const;
export const UPLOAD_RESULTS = ['stored', 'checksum_mismatch', 'other'] as const;
type UploadResult = (typeof UPLOAD_RESULTS)[number];

/**
 * One job's row: [scout_id, scout_instance_id, job_name, count, bytes, newest snapshot's time in
 * ms, protected count, count whose object is still locked].
 */
type JobRow = [string, string, string, number, number, number, number, number];

/**
 * Counts, bytes and the newest snapshot's own time per job (its arrival for a row that has
 * none yet), aggregated inside the database to one JSON value
 * (PGlite decodes rows slowly; the index can hold many thousands of snapshots).
 */
async function perJob(db: StationDb, now: number): Promise<JobRow[]> {
  const s = snapshots;
  const jobs = db
    .select({
      scoutId: s.scoutId,
      instanceId: s.scoutInstanceId,
      jobName: s.jobName,
      count: sql<number>`count(*)`.as('snapshot_count'),
      bytes: sql<number>`sum(${s.sizeBytes})`.as('snapshot_bytes'),
      newest: sql<number>`coalesce(max(nullif(${s.takenAt}, 0)), max(${s.storedAt}))`.as('newest_at'),
      guarded: sql<number>`count(*) filter (where ${s.protected})`.as('protected_count'),
      locked: sql<number>`count(*) filter (where ${s.lockedUntil} > ${now})`.as('locked_count'),
    })
    .from(s)
    .where(eq(s.missing, false))
    .groupBy(s.scoutId, s.scoutInstanceId, s.jobName)
    .as('jobs');
  const [row] = await db
    .select({
      rows: sql<string>`coalesce(json_agg(json_build_array(${jobs.scoutId}, ${jobs.instanceId},
        ${jobs.jobName}, ${jobs.count}, ${jobs.bytes}, ${jobs.newest}, ${jobs.guarded}, ${jobs.locked})), '[]')::text`,
    })
    .from(jobs);
  return JSON.parse(row?.rows ?? '[]') as JobRow[];
}

async function freeBytes(storedFree: () => Promise<number | null>): Promise<number | null> {
  try {
    return await storedFree();
  } catch (err) {
    log.warn({ err }, 'metrics: cannot read the free space of BACKUP_ROOT');
    return null;
  }
}

/** Which outcome a finalize request had, from its answer (or the error it ended with). */
function finalizeResult(status: number, error: unknown): UploadResult {
  if (status >= 200 && status < 300) return 'stored';
  const detail = error instanceof AppError ? error.detail : null;
  if (typeof detail === 'object' && detail?.status === 'checksum_mismatch') return 'checksum_mismatch';
  return 'other';
}

/**
 * The Station's metrics. The snapshot gauges and `backupd_verify_failures` are read from the
 * database at every scrape, so every Station on one database reports the same.
 * `backupd_uploads_total` counts this process's finalize outcomes (a counter per instance,
 * as Prometheus expects of each scraped target).
 */
export function createStationMetrics(deps: {
  db: StationDb;
  /** Free bytes where snapshots are stored; absent when the store has no such limit (a bucket). */
  storedFree?: () => Promise<number | null>;
  lastVerification: () => Promise<VerifyResult>;
  /** Uploads this process refused over retention_max_uploads_per_hour, per job. */
  refusedUploads?: () => [string, string, string, number][];
}): RoleMetrics & { countFinalize: MiddlewareHandler<AppEnv> } {
  const registry = createMetricsRegistry();
  const registers = [registry];
  const define = metricsIn(registry);
  const count = define.gauge(
    'backupd_snapshots',
    'Snapshots stored for the job (missing files not counted).',
    JOB_LABELS,
  );
  const bytes = define.gauge('backupd_snapshot_bytes', "Bytes of the job's stored snapshots.", JOB_LABELS);
  const newest = define.gauge(
    'backupd_last_snapshot_timestamp_seconds',
    "The time of the job's newest snapshot, its own timestamp (Unix time, seconds).",
    JOB_LABELS,
  );
  const guarded = define.gauge(
    'backupd_snapshots_protected',
    'Snapshots of the job an admin protected (retention never deletes them).',
    JOB_LABELS,
  );
  const locked = define.gauge(
    'backupd_snapshots_locked',
    'Snapshots of the job whose object is still under S3 Object Lock retention.',
    JOB_LABELS,
  );
  const refused = define.counter(
    'backupd_uploads_refused_total',
    "New uploads this Station process refused (429) over the job's retention_max_uploads_per_hour.",
    JOB_LABELS,
  );
  const refusedSeen = new Map<string, number>();
  const free = new Gauge({
    name: 'backupd_storage_free_bytes',
    help: 'Free bytes on the disk of BACKUP_ROOT (for this Station process).',
    // A bucket has no free space to report: no family rather than a 0 that reads as a full disk.
    registers: deps.storedFree ? registers : [],
  });
  const verifyFailures = define.gauge(
    'backupd_verify_failures',
    'Problems the last snapshot verification found (0 before the first one).',
  );
  const uploads = define.counter(
    'backupd_uploads_total',
    'Finalize requests this Station process answered, by result: stored, checksum_mismatch, other.',
    ['result'],
  );
  for (const result of UPLOAD_RESULTS) uploads.inc({ result }, 0);

  return {
    registry,

    async refresh() {
      const [jobs, space, verification] = await Promise.all([
        perJob(deps.db, clock.now()),
        deps.storedFree ? freeBytes(deps.storedFree) : null,
        deps.lastVerification(),
      ]);
      for (const gauge of [count, bytes, newest, guarded, locked]) gauge.reset();
      for (const [scoutId, instanceId, jobName, n, total, newestAt, nGuarded, nLocked] of jobs) {
        const labels = { scout_id: scoutId, scout_instance_id: instanceId, job_name: jobName };
        count.set(labels, Number(n));
        bytes.set(labels, Number(total));
        newest.set(labels, Number(newestAt) / 1000);
        guarded.set(labels, Number(nGuarded));
        locked.set(labels, Number(nLocked));
      }
      for (const [scoutId, instanceId, jobName, n] of deps.refusedUploads?.() ?? []) {
        const key = JSON.stringify([scoutId, instanceId, jobName]);
        const labels = { scout_id: scoutId, scout_instance_id: instanceId, job_name: jobName };
        refused.inc(labels, n - (refusedSeen.get(key) ?? 0));
        refusedSeen.set(key, n);
      }
      free.reset();
      if (space !== null) free.set(space);
      verifyFailures.set(verification.failures.length);
    },

    countFinalize: async function countFinalize(c, next) {
      await next();
      if (c.req.method === 'POST') uploads.inc({ result: finalizeResult(c.res.status, c.error) });
    },
  };
}
