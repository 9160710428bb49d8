import { clock } from '../../core/clock.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import type { DrillOutcome as DrillReport } from '../../shared/protocol/drills.ts';
import type { StationDb } from '../db/open.ts';
import { drills } from '../db/station-tables.ts';
import { checkFilename } from '../storage/keys.ts';
import type { JobRef } from './snapshot-index.ts';
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

/** Restore drills the Scouts report: the last one of each job, and a notification when it failed. */
export function createDrills(deps: { db: StationDb; tokens: StationTokens; notifier: Notifier }) {
  return {
    async record(token: StationTokenRow, ref: JobRef, report: DrillReport): Promise<{ status: 'recorded' }> {
      checkJobRef(ref);
      checkFilename(report.filename);
      await deps.tokens.requireBinding(token, ref.scoutId, ref.instanceId);
      const values = {
        filename: report.filename,
        status: report.status,
        files: report.files,
        bytes: report.bytes,
        error: report.status === 'failed' ? (report.error ?? 'the drill failed') : null,
        finishedAt: Date.parse(report.finished_at),
        recordedAt: clock.now(),
      };
      await deps.db
        .insert(drills)
        .values({ scoutId: ref.scoutId, scoutInstanceId: ref.instanceId, jobName: ref.jobName, ...values })
        .onConflictDoUpdate({
          target: [drills.scoutId, drills.scoutInstanceId, drills.jobName],
          set: values,
        });
      if (report.status === 'failed') {
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
      const byJob = new Map(rows.map((r) => [`${r.scoutId}/${r.scoutInstanceId}/${r.jobName}`, r]));
      return scouts.map((scout) => ({
        ...scout,
        instances: scout.instances.map((instance) => ({
          ...instance,
          jobs: instance.jobs.map((job) => {
            const row = byJob.get(`${scout.scout_id}/${instance.scout_instance_id}/${job.job_name}`);
            return { ...job, last_drill: row ? view(row) : null };
          }),
        })),
      }));
    },
  };
}

export type Drills = ReturnType<typeof createDrills>;
