import { createMetricsRegistry, metricsIn, type RoleMetrics } from '../../core/http/routes/metrics.ts';
import type { Operation, Runner } from '../schedule/runner.ts';
import { type JobStates, stateView } from '../state/job-states.ts';

/**
 * Bytes an update adds to its phase: a phase counts up from 0 for each job, so a lower value
 * (or another phase or job) starts a new count.
 */
export function addedBytes(
  op: Readonly<Operation>,
  patch: Partial<Pick<Operation, 'job_name' | 'phase' | 'bytes_done'>>,
): number {
  if (patch.bytes_done === undefined) return 0;
  const samePhase =
    (patch.phase === undefined || patch.phase === op.phase) &&
    (patch.job_name === undefined || patch.job_name === op.job_name);
  const before = samePhase ? op.bytes_done : 0;
  return patch.bytes_done >= before ? patch.bytes_done - before : patch.bytes_done;
}

/** When the job's last drill finished if it succeeded (ms), from its stored outcome. */
function drillSucceededAt(lastDrill: string | null): number | null {
  if (!lastDrill) return null;
  try {
    const outcome = JSON.parse(lastDrill) as { status?: unknown; finished_at?: unknown };
    const at =
      outcome.status === 'ok' && typeof outcome.finished_at === 'string'
        ? Date.parse(outcome.finished_at)
        : NaN;
    return Number.isFinite(at) ? at : null;
  } catch {
    return null;
  }
}

/**
 * The Scout's metrics: job gauges read from the local job state at every scrape, and the bytes
 * its operations moved (read while archiving, sent while uploading, read while restoring)
 * counted as they go.
 */
export function createScoutMetrics(deps: { states: JobStates; runner: Runner }): RoleMetrics {
  const registry = createMetricsRegistry();
  const define = metricsIn(registry);
  const lastSuccess = define.gauge(
    'backupd_job_last_success_timestamp_seconds',
    "When the job's last backup succeeded (uploaded, or unchanged since the stored snapshot; Unix time, seconds).",
    ['job_name'],
  );
  const lastDrill = define.gauge(
    'backupd_job_last_drill_success_timestamp_seconds',
    "When the job's last restore drill finished, if it proved the snapshot restorable (Unix time, seconds; no sample after a failed drill or before the first).",
    ['job_name'],
  );
  const failed = define.gauge('backupd_job_failed', "1 when the job's last backup attempt failed, else 0.", [
    'job_name',
  ]);
  const skipped = define.gauge(
    'backupd_job_skipped_entries',
    "Entries the job's last stored snapshot left out (unreadable, vanished, FIFOs, sockets, devices); 0 when none.",
    ['job_name'],
  );
  const operationBytes = define.counter(
    'backupd_operation_bytes_total',
    'Bytes moved by operations since the Scout started, by operation kind and phase.',
    ['kind', 'phase'],
  );
  deps.runner.observeProgress((op, patch) => {
    const bytes = addedBytes(op, patch);
    if (bytes > 0) operationBytes.inc({ kind: op.kind, phase: patch.phase ?? op.phase }, bytes);
  });

  return {
    registry,
    async refresh() {
      const rows = await deps.states.all();
      lastSuccess.reset();
      lastDrill.reset();
      failed.reset();
      skipped.reset();
      for (const row of rows.values()) {
        const labels = { job_name: row.jobName };
        if (row.lastSuccessAt !== null) lastSuccess.set(labels, row.lastSuccessAt / 1000);
        const drilled = drillSucceededAt(row.lastDrill);
        if (drilled !== null) lastDrill.set(labels, drilled / 1000);
        failed.set(labels, row.lastStatus === 'failed' ? 1 : 0);
        skipped.set(labels, stateView(row).last_skipped?.count ?? 0);
      }
    },
  };
}
