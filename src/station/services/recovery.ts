import { notFound } from '../../core/errors.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import type { JobList, SnapshotList } from '../../shared/protocol/recovery.ts';
import { checkComponent, checkFilename } from '../storage/keys.ts';
import { jobPath } from '../storage/layout.ts';
import type { SnapshotStore } from '../storage/storage.ts';
import type { JobKey, SnapshotIndex, SnapshotRow } from './snapshot-index.ts';
import { checkJobRef } from './snapshots.ts';
import type { StationTokenRow, StationTokens } from './station-tokens.ts';

/** Which snapshot a Scout may download: only from an instance its token is bound to. */
export function createRecovery(deps: { tokens: StationTokens; index: SnapshotIndex; store: SnapshotStore }) {
  async function located(ref: JobKey, row: SnapshotRow | undefined, what: string) {
    if (!row) throw notFound(`no ${what} snapshot of ${jobPath(ref)}`);
    const key = { ...ref, filename: row.filename };
    const stats = await deps.store.stat(key);
    if (!stats) throw notFound(`snapshot ${row.filename} is indexed but its file is missing on the Station`);
    return { key, sizeBytes: stats.sizeBytes };
  }

  async function allowed(token: StationTokenRow, ref: JobKey) {
    checkJobRef(ref);
    await deps.tokens.requireBinding(token, ref.scoutId, ref.instanceId);
  }

  return {
    async latest(token: StationTokenRow, ref: JobKey) {
      await allowed(token, ref);
      return located(ref, await deps.index.newest(ref), 'stored');
    },
    async byFingerprint(token: StationTokenRow, ref: JobKey, fp: string) {
      await allowed(token, ref);
      return located(ref, await deps.index.newestByFingerprint(ref, fp), `fingerprint ${fp}`);
    },
    /** The instance's jobs with snapshots not missing, by name: count and newest. */
    async jobs(token: StationTokenRow, scoutId: string, instanceId: string): Promise<JobList> {
      checkComponent('scout_id', scoutId);
      checkComponent('scout_instance_id', instanceId);
      await deps.tokens.requireBinding(token, scoutId, instanceId);
      const byJob = new Map<string, SnapshotRow[]>();
      for (const row of await deps.index.ofInstance(scoutId, instanceId)) {
        if (row.missing) continue;
        const list = byJob.get(row.jobName) ?? [];
        list.push(row);
        byJob.set(row.jobName, list);
      }
      const jobs = [...byJob].map(([jobName, rows]) => {
        const newest = rows.reduce((a, b) => (b.takenAt > a.takenAt ? b : a));
        return {
          job_name: jobName,
          snapshot_count: rows.length,
          newest_timestamp: utcSecond(newest.takenAt),
          newest_size_bytes: newest.sizeBytes,
        };
      });
      return { jobs: jobs.sort((a, b) => (a.job_name < b.job_name ? -1 : a.job_name > b.job_name ? 1 : 0)) };
    },
    /** The job's stored snapshots, newest first by their own time. */
    async list(token: StationTokenRow, ref: JobKey): Promise<SnapshotList> {
      await allowed(token, ref);
      const rows = await deps.index.list(ref);
      return {
        snapshots: rows.map((row) => ({
          filename: row.filename,
          timestamp: utcSecond(row.takenAt),
          size_bytes: row.sizeBytes,
          fingerprint: row.fingerprint,
        })),
      };
    },
    async exact(token: StationTokenRow, ref: JobKey, filename: string) {
      await allowed(token, ref);
      checkFilename(filename);
      return located(ref, await deps.index.byName(ref, filename), filename);
    },
  };
}

export type Recovery = ReturnType<typeof createRecovery>;
