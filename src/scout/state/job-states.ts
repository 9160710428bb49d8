import { eq } from 'drizzle-orm';
import type { DrillOutcome } from '../../shared/protocol/drills.ts';
import type { ErrorCode } from '../../shared/protocol/error-codes.ts';
import type { JobStateView, LastStatus } from '../../shared/protocol/scout-jobs.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';
import type { ScoutDb } from '../db/open.ts';
import { jobStates } from '../db/scout-tables.ts';
import type { SkippedSummary } from '../jobs/skipped.ts';
import type { StagedArchive } from '../upload/uploader.ts';

export type { DrillOutcome, LastStatus };

type Row = typeof jobStates.$inferSelect;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const snapshotTime = (name: string | null) => iso(name ? (parseSnapshotName(name)?.takenAt ?? null) : null);

/** A job's `state` as the API shows it. */
export function stateView(row: Row | undefined): JobStateView {
  return {
    last_status: (row?.lastStatus ?? 'never_run') as LastStatus,
    last_error: row?.lastError ?? null,
    /** The stable code of last_error, for badges; the column is written only from ErrorCode values. */
    last_error_code: (row?.lastErrorCode ?? null) as ErrorCode | null,
    last_attempt_at: iso(row?.lastAttemptAt ?? null),
    last_success_at: iso(row?.lastSuccessAt ?? null),
    last_stored_as: row?.lastStoredAs ?? null,
    last_stored_bytes: row?.lastStoredBytes ?? null,
    /** When the files of the newest snapshot were read (a full-content snapshot), from its name. */
    last_snapshot_at: snapshotTime(row?.lastStoredAs ?? null),
    staged: Boolean(row?.staged),
    /** When the waiting archive was made (its files are as they were then), or null. */
    staged_at: row?.staged ? (JSON.parse(row.staged) as StagedArchive).timestamp : null,
    last_drill: row?.lastDrill ? (JSON.parse(row.lastDrill) as DrillOutcome) : null,
    /** What the last snapshot made left out ({count, paths}: first 20, escaped), or null. */
    last_skipped: row?.lastSkipped ? (JSON.parse(row.lastSkipped) as SkippedSummary) : null,
  };
}

/** Local job state, kept by folder; survives restarts, so a staged archive is never re-made. */
export function createJobStates(db: ScoutDb) {
  return {
    async get(relativePath: string): Promise<Row | undefined> {
      const [row] = await db.select().from(jobStates).where(eq(jobStates.relativePath, relativePath));
      return row;
    },
    async all(): Promise<Map<string, Row>> {
      const rows = await db.select().from(jobStates);
      return new Map(rows.map((r) => [r.relativePath, r]));
    },
    /** The job name each folder last ran under, by relative path. */
    async names(): Promise<Map<string, string>> {
      const rows = await db
        .select({ relativePath: jobStates.relativePath, jobName: jobStates.jobName })
        .from(jobStates);
      return new Map(rows.map((r) => [r.relativePath, r.jobName]));
    },
    staged(row: Row | undefined): StagedArchive | null {
      return row?.staged ? (JSON.parse(row.staged) as StagedArchive) : null;
    },
    async update(
      relativePath: string,
      jobName: string,
      patch: Partial<Omit<Row, 'relativePath' | 'staged' | 'lastSkipped'>> & {
        staged?: StagedArchive | null;
        lastSkipped?: SkippedSummary | null;
      },
    ): Promise<void> {
      const { staged, lastSkipped, ...rest } = patch;
      const values = {
        ...rest,
        jobName,
        ...(staged !== undefined ? { staged: staged ? JSON.stringify(staged) : null } : {}),
        ...(lastSkipped !== undefined
          ? { lastSkipped: lastSkipped ? JSON.stringify(lastSkipped) : null }
          : {}),
      };
      await db
        .insert(jobStates)
        .values({ relativePath, lastStatus: 'never_run', ...values })
        .onConflictDoUpdate({ target: jobStates.relativePath, set: values });
    },
    /** At start-up: a job left `running` by a crash or kill reads as failed, its staged archive kept. */
    async markInterrupted(): Promise<void> {
      await db
        .update(jobStates)
        .set({
          lastStatus: 'failed',
          lastError: 'interrupted by a Scout restart; the next cycle continues it',
          lastErrorCode: null,
        })
        .where(eq(jobStates.lastStatus, 'running'));
    },

    async remove(relativePath: string): Promise<void> {
      await db.delete(jobStates).where(eq(jobStates.relativePath, relativePath));
    },
  };
}

export type JobStates = ReturnType<typeof createJobStates>;
