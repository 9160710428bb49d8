import { and, eq } from 'drizzle-orm';
import { hit, type Limit, type WindowCounter } from '../../core/auth/rate-limit.ts';
import { clock } from '../../core/clock.ts';
import { notFound } from '../../core/errors.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import type { DrillOutcome as DrillReport } from '../../shared/protocol/drills.ts';
import type { StationDb } from '../db/open.ts';
import { drills } from '../db/station-tables.ts';
import { checkFilename } from '../storage/keys.ts';
import { jobPath } from '../storage/layout.ts';
import type { JobKey, SnapshotIndex } from './snapshot-index.ts';
import { checkJobRef } from './snapshots.ts';
import type { StationTokenRow, StationTokens } from './station-tokens.ts';

type Row = typeof drills.$inferSelect;

const view = (row: Row): DrillReport => ({
  filename: row.filename,
  status: row.status as DrillReport['status'],
  files: row.files,
  bytes: row.bytes,
  error: row.error,
  finished_at: new Date(row.finishedAt).toISOString(),
});

/**
 * At most one drill_failed notification per job and hour, whatever the reports say: a token
 * holder flipping a job between ok and failed must not turn the Station into a pager.
 */
const NOTICE_LIMIT: Limit = { name: 'drill-notice', limit: 1, windowMs: 60 * 60 * 1000 };

const sameJob = (ref: JobKey) =>
  and(
    eq(drills.scoutId, ref.scoutId),
    eq(drills.scoutInstanceId, ref.instanceId),
    eq(drills.jobName, ref.jobName),
  );

/**
 * Restore drills the Scouts report: the last one of each job, and a notification when a job's
 * drills start failing (issue #23 item 3). A report names a snapshot the Station stores for
 * that job (else 404): a Station token cannot invent jobs, rows or notifications.
 */
export function createDrills(deps: {
  db: StationDb;
  tokens: StationTokens;
  index: SnapshotIndex;
  windows: WindowCounter;
  notifier: Notifier;
}) {
  /** Keeps the report as the job's last drill; returns the one it replaced. */
  async function keep(ref: JobKey, values: Omit<Row, 'scoutId' | 'scoutInstanceId' | 'jobName'>) {
    return deps.db.transaction(async (tx) => {
      const [previous] = await tx.select().from(drills).where(sameJob(ref)).for('update');
      await tx
        .insert(drills)
        .values({ scoutId: ref.scoutId, scoutInstanceId: ref.instanceId, jobName: ref.jobName, ...values })
        .onConflictDoUpdate({
          target: [drills.scoutId, drills.scoutInstanceId, drills.jobName],
          set: values,
        });
      return previous;
    });
  }

  /**
   * A failed drill is news when the job's last drill did not fail, or failed on another
   * snapshot; the same failure reported again is not, and news is sent once an hour at most.
   */
  async function isNews(ref: JobKey, report: DrillReport, previous: Row | undefined): Promise<boolean> {
    if (report.status !== 'failed') return false;
    if (previous?.status === 'failed' && previous.filename === report.filename) return false;
    return (await hit(deps.windows, NOTICE_LIMIT, jobPath(ref))) === 0;
  }

  return {
    async record(token: StationTokenRow, ref: JobKey, report: DrillReport): Promise<{ status: 'recorded' }> {
      checkJobRef(ref);
      checkFilename(report.filename);
      await deps.tokens.requireBinding(token, ref.scoutId, ref.instanceId);
      if (!(await deps.index.byName(ref, report.filename))) {
        throw notFound(
          `no snapshot ${report.filename} of ${jobPath(ref)} is stored here; a drill is reported for a snapshot the Station stores`,
        );
      }
      const values = {
        filename: report.filename,
        status: report.status,
        files: report.files,
        bytes: report.bytes,
        error: report.status === 'failed' ? (report.error ?? 'the drill failed') : null,
        finishedAt: Date.parse(report.finished_at),
        recordedAt: clock.now(),
      };
      const previous = await keep(ref, values);
      if (await isNews(ref, report, previous)) {
        deps.notifier.notify({
          event: 'drill_failed',
          source: 'drill',
          title: `Restore drill of ${ref.jobName} on ${ref.scoutId} failed`,
          summary: `${ref.jobName} on ${ref.scoutId}: the newest snapshot ${report.filename} could not be proven restorable: ${values.error}`,
          priority: 'high',
          tags: ['x', 'backup'],
          scout_id: ref.scoutId,
          scout_instance_id: ref.instanceId,
          job_name: ref.jobName,
          filename: report.filename,
        });
      }
      return { status: 'recorded' };
    },

    /** The overview tree with each job's `last_drill` (null when none was reported). */
    async decorate<
      T extends {
        scout_id: string;
        instances: { scout_instance_id: string; jobs: { job_name: string }[] }[];
      },
    >(scouts: T[]) {
      const rows = await deps.db.select().from(drills);
      const byJob = new Map(rows.map((r) => [jobPath({ ...r, instanceId: r.scoutInstanceId }), r]));
      return scouts.map((scout) => ({
        ...scout,
        instances: scout.instances.map((instance) => ({
          ...instance,
          jobs: instance.jobs.map((job) => {
            const row = byJob.get(
              jobPath({
                scoutId: scout.scout_id,
                instanceId: instance.scout_instance_id,
                jobName: job.job_name,
              }),
            );
            return { ...job, last_drill: row ? view(row) : null };
          }),
        })),
      }));
    },
  };
}

export type Drills = ReturnType<typeof createDrills>;
