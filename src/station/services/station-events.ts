import type { Integrations } from '../../core/integrations.ts';
import { logger } from '../../core/log.ts';
import type { VerifyResult } from '../../shared/protocol/snapshots.ts';
import type { LagEvents } from '../replication/replication.ts';
import type { UploadRefused } from '../retention/upload-rate.ts';
import type { UploadEvents, UploadFacts } from '../uploads/index.ts';

const log = logger.child({ mod: 'station/events' });

/**
 * What the Station tells the outside world: hooks around finalize (pre_command before the
 * snapshot is stored, post_command after) and ntfy notifications. Neither ever fails the work.
 */
export function createStationEvents(integrations: Integrations) {
  const { hooks, notifier } = integrations;

  const uploads: UploadEvents = {
    async beforeStore(facts: UploadFacts) {
      await hooks
        .pre({ event: 'finalize', ...facts })
        .catch((err: unknown) => log.warn({ err }, 'pre hook failed'));
    },
    stored(facts: UploadFacts) {
      void hooks
        .post({ event: 'snapshot_stored', ...facts })
        .catch((err: unknown) => log.warn({ err }, 'post hook failed'));
      const unusual = String(facts.unusual ?? '');
      notifier.notify({
        event: 'snapshot_stored',
        source: 'upload',
        title: unusual ? `Unusual snapshot from ${facts.scout_id}` : `Snapshot stored for ${facts.scout_id}`,
        summary: unusual
          ? `UNUSUAL: ${facts.job_name} on ${facts.scout_id} stored as ${facts.filename}: ${unusual}`
          : `${facts.job_name} on ${facts.scout_id} stored as ${facts.filename} (${facts.size_bytes} bytes)`,
        priority: unusual ? 'high' : 'default',
        tags: unusual ? ['warning', 'backup'] : ['white_check_mark', 'backup'],
        ...stringFacts(facts),
      });
    },
    failed(facts: UploadFacts, reason: string) {
      notifier.notify({
        event: 'upload_failed',
        source: 'upload',
        title: `Upload failed for ${facts.scout_id}`,
        summary: `${facts.job_name} on ${facts.scout_id}: finalize failed: ${reason}`,
        priority: 'high',
        tags: ['x', 'backup'],
        reason,
        ...stringFacts(facts),
      });
    },
  };

  const replication: LagEvents = {
    failed(facts) {
      void hooks
        .post({ event: 'replication_failed', ...facts })
        .catch((err: unknown) => log.warn({ err }, 'post hook failed'));
      notifier.notify({
        event: 'replication_failed',
        source: 'replication',
        title: 'Replication from the primary failed',
        summary: `replication run failed: ${facts.error}`,
        priority: 'high',
        tags: ['x', 'backup'],
        error: facts.error,
        failed: facts.failed,
      });
    },
    copied(facts) {
      void hooks
        .post({ event: 'replication_copied', ...facts })
        .catch((err: unknown) => log.warn({ err }, 'post hook failed'));
    },
    lagging(job) {
      void hooks
        .post({ event: 'replication_lagging', ...job })
        .catch((err: unknown) => log.warn({ err }, 'post hook failed'));
      notifier.notify({
        event: 'replication_lagging',
        source: 'replication',
        title: `Replica behind for ${job.job_name} on ${job.scout_id}`,
        summary: `the replica's newest copy of ${job.job_name} (${job.scout_id}/${job.scout_instance_id}) is ${Math.round(job.lag_seconds / 3600)} hours behind the primary`,
        priority: 'high',
        tags: ['warning', 'backup'],
        ...stringFacts(job),
      });
    },
  };

  return {
    uploads,
    replication,
    verificationDone(result: VerifyResult) {
      if (result.status !== 'failed') return;
      notifier.notify({
        event: 'verify_failed',
        source: 'verify',
        title: 'Snapshot verification found problems',
        summary: `verification checked ${result.checked} snapshots and found ${result.failures.length} problems`,
        priority: 'high',
        tags: ['warning'],
        checked: result.checked,
        failures: result.failures.length,
      });
    },
    /** The first refused upload of a job's hour (retention_max_uploads_per_hour); one per hour. */
    uploadsRefused(refused: UploadRefused) {
      notifier.notify({
        event: 'uploads_refused',
        source: 'upload',
        title: `Uploads refused for ${refused.scout_id}`,
        summary: `${refused.job_name} on ${refused.scout_id}/${refused.scout_instance_id} started more than ${refused.limit} uploads this hour; more are refused until the hour ends (a runaway or compromised Scout?)`,
        priority: 'high',
        tags: ['warning', 'backup'],
        scout_id: refused.scout_id,
        scout_instance_id: refused.scout_instance_id,
        job_name: refused.job_name,
        limit: String(refused.limit),
      });
    },
    restoreRequested(request: {
      id: string;
      target_scout_id: string;
      target_instance_id: string;
      job_name: string;
      filename: string;
    }) {
      notifier.notify({
        event: 'restore_request_created',
        source: 'restore_request',
        title: `Restore requested for ${request.target_scout_id}`,
        summary: `restore of ${request.filename} (${request.job_name}) requested on ${request.target_scout_id}/${request.target_instance_id}`,
        tags: ['arrows_counterclockwise'],
        scout_id: request.target_scout_id,
        scout_instance_id: request.target_instance_id,
        job_name: request.job_name,
        filename: request.filename,
        request_id: request.id,
      });
    },
  };
}

function stringFacts(facts: UploadFacts): Record<string, string> {
  return Object.fromEntries(Object.entries(facts).map(([k, v]) => [k, String(v)]));
}

export type StationEvents = ReturnType<typeof createStationEvents>;
