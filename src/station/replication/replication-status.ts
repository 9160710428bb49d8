import type { SettingsStore } from '../../core/settings/settings-store.ts';

/** A job as the last run saw it on the primary. */
export interface SourceJob {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  /** The primary's newest and oldest snapshot of the job, by their own time (ms). */
  source_newest_ms: number;
  source_oldest_ms: number;
}

/** What every Station on the database knows of the replication runs (settings row `replication_status`). */
export interface SavedStatus {
  last_started_at: number | null;
  last_finished_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  /** Bytes copied by the last (or the running) run. */
  bytes_copied: number;
  /** Since this database began replicating, for /metrics. */
  bytes_copied_total: number;
  failures_total: number;
  copied_total: number;
  jobs: SourceJob[];
  /** Jobs (scout/instance/job) whose lag alert was sent, so it is sent once per episode. */
  lagging: string[];
}

const SECTION = 'replication_status';

const EMPTY: SavedStatus = {
  last_started_at: null,
  last_finished_at: null,
  last_success_at: null,
  last_error: null,
  bytes_copied: 0,
  bytes_copied_total: 0,
  failures_total: 0,
  copied_total: 0,
  jobs: [],
  lagging: [],
};

/** The replication status in the database, so any Station of a shared database answers the same. */
export function createStatusStore(store: SettingsStore) {
  return {
    async read(): Promise<SavedStatus> {
      return { ...EMPTY, ...((await store.read(SECTION)) as Partial<SavedStatus>) };
    },
    async update(change: (status: SavedStatus) => Partial<SavedStatus>): Promise<SavedStatus> {
      const current = await this.read();
      const next = { ...current, ...change(current) };
      await store.write(SECTION, next as unknown as Record<string, unknown>);
      return next;
    },
  };
}

export type StatusStore = ReturnType<typeof createStatusStore>;
