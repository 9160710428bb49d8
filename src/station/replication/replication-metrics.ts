import type { Registry } from 'prom-client';
import { metricsIn } from '../../core/http/routes/metrics.ts';
import { JOB_LABELS } from '../services/station-metrics.ts';
import type { ReplicationPulls } from './pulls.ts';
import type { Replication } from './replication.ts';

/**
 * Replication on `GET /metrics`, read from the database at each scrape (every Station of one
 * database reports the same): on a replica the lag per job, bytes copied and failures; on a
 * primary, per replica token, its last pull and the bytes it was sent.
 */
export function replicationMetrics(
  registry: Registry,
  deps: { replication: Replication; pulls: ReplicationPulls },
) {
  const define = metricsIn(registry);
  const lag = define.gauge(
    'backupd_replication_lag_seconds',
    "How far the replica's newest copy of the job is behind the primary's newest snapshot (seconds).",
    JOB_LABELS,
  );
  const copied = define.gauge(
    'backupd_replication_copied_bytes_total',
    'Bytes this replica copied from the primary (all runs).',
  );
  const failures = define.gauge(
    'backupd_replication_failures_total',
    'Snapshots (or whole runs) replication failed to copy (all runs).',
  );
  const lastSuccess = define.gauge(
    'backupd_replication_last_success_timestamp_seconds',
    'When the last replication run ended without a failure (Unix time, seconds; 0 never).',
  );
  const pulled = define.gauge(
    'backupd_replication_pull_timestamp_seconds',
    'When the replica (automation token name) last pulled from this primary (Unix time, seconds).',
    ['replica'],
  );
  const served = define.gauge(
    'backupd_replication_served_bytes_total',
    'Bytes this primary sent to the replica (by the ranges it asked for).',
    ['replica'],
  );

  return {
    async refresh(): Promise<void> {
      const [status, replicas] = await Promise.all([deps.replication.status(), deps.pulls.list()]);
      lag.reset();
      for (const job of status.jobs) {
        lag.set(
          { scout_id: job.scout_id, scout_instance_id: job.scout_instance_id, job_name: job.job_name },
          job.lag_seconds,
        );
      }
      copied.set(status.bytes_copied_total);
      failures.set(status.failures_total);
      lastSuccess.set(status.last_success_at ? Date.parse(status.last_success_at) / 1000 : 0);
      pulled.reset();
      served.reset();
      for (const replica of replicas) {
        const last = [replica.last_list_at, replica.last_download_at]
          .filter((at): at is string => at !== null)
          .map((at) => Date.parse(at));
        pulled.set({ replica: replica.name }, Math.max(0, ...last) / 1000);
        served.set({ replica: replica.name }, replica.bytes_served);
      }
    },
  };
}
