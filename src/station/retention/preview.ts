import type { Clock } from '../../core/clock.ts';
import type { PreviewSnapshot, RetentionPreviewReply } from '../../shared/protocol/retention.ts';
import type { SnapshotIndex, SnapshotRow } from '../services/snapshot-index.ts';
import type { StationSettingsService } from '../services/station-settings.ts';
import type { RetentionOverridesInput } from './fields.ts';
import type { JobRetention } from './job-overrides.ts';
import { planRetention } from './plan.ts';

export interface PreviewFilter {
  scoutId?: string | undefined;
  instanceId?: string | undefined;
  jobName?: string | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

const view = (row: SnapshotRow): PreviewSnapshot => ({
  filename: row.filename,
  timestamp: iso(row.takenAt || row.storedAt),
  stored_at: iso(row.storedAt),
  size_bytes: row.sizeBytes,
});

/**
 * "With this policy, these snapshots would be deleted": the policy as saved, or with the
 * retention fields of `trial` changed, run on every job (or the jobs `filter` names) without
 * deleting anything. A trial for one job (job_name given) changes that job's own policy; a
 * trial for the Station changes the Station's settings, under each job's overrides.
 */
export function createRetentionPreview(deps: {
  index: SnapshotIndex;
  jobRetention: JobRetention;
  settings: StationSettingsService;
  clock: Clock;
}) {
  return {
    async preview(filter: PreviewFilter, trial: RetentionOverridesInput): Promise<RetentionPreviewReply> {
      const now = deps.clock.now();
      const station = { ...(await deps.settings.read()), ...(filter.jobName ? {} : trial) };
      const rows = (await deps.index.all()).filter(
        (row) =>
          !row.missing &&
          (filter.scoutId === undefined || row.scoutId === filter.scoutId) &&
          (filter.instanceId === undefined || row.scoutInstanceId === filter.instanceId) &&
          (filter.jobName === undefined || row.jobName === filter.jobName),
      );
      const jobs = new Map<string, SnapshotRow[]>();
      for (const row of rows) {
        const key = JSON.stringify([row.scoutId, row.scoutInstanceId, row.jobName]);
        jobs.set(key, [...(jobs.get(key) ?? []), row]);
      }
      const answer = [];
      let deleteCount = 0;
      let deleteBytes = 0;
      for (const list of jobs.values()) {
        const first = list[0] as SnapshotRow;
        const ref = { scoutId: first.scoutId, instanceId: first.scoutInstanceId, jobName: first.jobName };
        const own = await deps.jobRetention.overrides(ref);
        const policy = { ...station, ...own, ...(filter.jobName ? trial : {}) };
        const plan = planRetention(list, policy, now);
        deleteCount += plan.deleted.length;
        deleteBytes += plan.deleted.reduce((sum, row) => sum + row.sizeBytes, 0);
        answer.push({
          scout_id: ref.scoutId,
          scout_instance_id: ref.instanceId,
          job_name: ref.jobName,
          policy,
          overrides: own,
          kept: list
            .filter((row) => plan.reasons.has(row.filename))
            .map((row) => ({ ...view(row), reasons: plan.reasons.get(row.filename) ?? [] })),
          deleted: plan.deleted.map(view),
        });
      }
      return {
        now: iso(now),
        policy: station,
        delete_count: deleteCount,
        delete_bytes: deleteBytes,
        jobs: answer,
      };
    },
  };
}

export type RetentionPreview = ReturnType<typeof createRetentionPreview>;
