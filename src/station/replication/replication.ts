import { type ScheduledTask, schedule } from 'node-cron';
import type { Clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import type { ReplicationJobLag, ReplicationStatusView } from '../../shared/protocol/replication.ts';
import type { StationDb } from '../db/open.ts';
import type { Leases } from '../services/leases.ts';
import type { SnapshotIndex } from '../services/snapshot-index.ts';
import { jobPath } from '../storage/layout.ts';
import type { CopyIn } from '../uploads/index.ts';
import { createReplicationSettings } from './replication-settings.ts';
import { createStatusStore, type SavedStatus } from './replication-status.ts';
import { createReplicator, type ReplicationEvents } from './replicator.ts';

const log = logger.child({ mod: 'station/replication' });
/** How often the schedule is read again (another Station of the database may have changed it). */
const RESCHEDULE_EVERY_MS = 60_000;

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

export interface LagEvents extends ReplicationEvents {
  lagging(facts: {
    scout_id: string;
    scout_instance_id: string;
    job_name: string;
    lag_seconds: number;
  }): void;
}

/**
 * Replication on the replica Station: its settings, the runs (scheduled by
 * `replication_schedule`, or `POST /api/replication/run`), and what `GET /api/replication`,
 * the dashboard and /metrics show of them.
 */
export function createReplication(deps: {
  db: StationDb;
  settingsStore: SettingsStore;
  index: SnapshotIndex;
  copies: CopyIn;
  leases: Leases;
  clock: Clock;
  events: LagEvents;
}) {
  const settings = createReplicationSettings(deps.settingsStore);
  const status = createStatusStore(deps.settingsStore);
  const replicator = createReplicator({ ...deps, settings, status });
  const stopping = new AbortController();
  let task: ScheduledTask | null = null;
  let expression = '';
  let timer: NodeJS.Timeout | null = null;

  /** Each job's lag: the primary's newest snapshot against the newest copy here (seconds). */
  async function jobs(saved: SavedStatus): Promise<ReplicationJobLag[]> {
    const now = deps.clock.now();
    return Promise.all(
      saved.jobs.map(async (job) => {
        const ref = { scoutId: job.scout_id, instanceId: job.scout_instance_id, jobName: job.job_name };
        const newest = await deps.index.newest(ref);
        const replicaNewest = newest ? newest.takenAt : null;
        // Without any copy here, everything since the primary's oldest snapshot is missing.
        const lag =
          replicaNewest === null
            ? Math.max(0, Math.round((now - job.source_oldest_ms) / 1000))
            : Math.max(0, Math.round((job.source_newest_ms - replicaNewest) / 1000));
        return {
          scout_id: job.scout_id,
          scout_instance_id: job.scout_instance_id,
          job_name: job.job_name,
          source_newest: iso(job.source_newest_ms),
          replica_newest: iso(replicaNewest),
          lag_seconds: lag,
        };
      }),
    );
  }

  /** Lag alerts after a run: once when a job's lag first passes replication_max_lag_hours. */
  async function checkLag(): Promise<void> {
    const { replication_max_lag_hours } = await settings.read();
    const saved = await status.read();
    const over =
      replication_max_lag_hours === 0
        ? []
        : (await jobs(saved)).filter((job) => job.lag_seconds > replication_max_lag_hours * 3600);
    const keyOf = (job: (typeof over)[number]) =>
      jobPath({ scoutId: job.scout_id, instanceId: job.scout_instance_id, jobName: job.job_name });
    const keys = over.map(keyOf);
    for (const job of over) {
      if (!saved.lagging.includes(keyOf(job))) deps.events.lagging(job);
    }
    await status.update(() => ({ lagging: keys }));
  }

  async function runNow(): Promise<'queued' | 'already_running'> {
    const started = await replicator.start(stopping.signal);
    if (started.status === 'queued') {
      void started.done
        .then(checkLag)
        .catch((err: unknown) => log.warn({ err }, 'replication lag check failed'));
    }
    return started.status;
  }

  async function reschedule(): Promise<void> {
    const { replication_schedule } = await settings.read();
    if (replication_schedule === expression) return;
    task?.stop();
    task = null;
    expression = replication_schedule;
    if (expression === '') return;
    task = schedule(expression, () => {
      runNow().catch((err: unknown) => log.warn({ err }, 'scheduled replication not started'));
    });
  }

  return {
    settings,

    /** Starts the schedule (and follows changes to it). */
    async start(): Promise<void> {
      await reschedule();
      timer = setInterval(() => {
        reschedule().catch((err: unknown) => log.warn({ err }, 'reading the replication schedule failed'));
      }, RESCHEDULE_EVERY_MS);
      timer.unref();
    },

    /** Stops the schedule and any run of this process (its copy resumes at the next run). */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      task?.stop();
      stopping.abort();
      await replicator.settled();
    },

    /** Applies changed settings at once (POST /api/settings). */
    reschedule,

    run: runNow,

    async status(): Promise<ReplicationStatusView> {
      // The lease first: a run saves its outcome before it lets go of the lease, so a run that
      // ends between the two reads shows as idle with its own outcome, never with the last one's.
      const running = await replicator.running();
      const saved = await status.read();
      const configured = (await settings.source()) !== null;
      return {
        state: running ? 'running' : configured ? 'idle' : 'not_configured',
        last_started_at: iso(saved.last_started_at),
        last_finished_at: iso(saved.last_finished_at),
        last_success_at: iso(saved.last_success_at),
        last_error: saved.last_error,
        bytes_copied: saved.bytes_copied,
        bytes_copied_total: saved.bytes_copied_total,
        failures_total: saved.failures_total,
        copied_total: saved.copied_total,
        jobs: await jobs(saved),
      };
    },
  };
}

export type Replication = ReturnType<typeof createReplication>;
