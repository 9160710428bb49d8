import { logger } from '../../core/log.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import type { ScoutSettingsService } from './scout-settings.ts';

const log = logger.child({ mod: 'scout/jobs' });

/**
 * Tells the admin (log and ntfy, `job_needs_attention`) that a folder claims a job name it cannot
 * have: another folder keeps it, or no claimant could be preferred (src/scout/jobs/name-claims.ts).
 */
export function notifyLostClaim(
  job: DiscoveredJob,
  settings: ScoutSettingsService,
  notifier: Notifier,
): void {
  settings
    .read()
    .then(({ scout_id }) => tell(job, scout_id, notifier))
    .catch((err: unknown) => log.error({ err }, 'could not report a job name claimed twice'));
}

function tell(job: DiscoveredJob, scout_id: string, notifier: Notifier): void {
  const claim = job.lost_claim;
  if (!claim) return;
  const summary = claim.kept_by
    ? `${job.relative_path} on ${scout_id} claims the job name "${claim.name}" of ${claim.kept_by}; ${claim.kept_by} is still backed up, ${job.relative_path} is not until its job_name changes (check who made its .upload_dir)`
    : `${job.relative_path} on ${scout_id} claims the job name "${claim.name}" that other folders claim too; none of them is backed up until the names differ`;
  log.warn({ relative_path: job.relative_path, job_name: claim.name, kept_by: claim.kept_by }, summary);
  notifier.notify({
    event: 'job_needs_attention',
    source: 'backup',
    title: `Job name ${claim.name} claimed twice`,
    summary,
    priority: 'high',
    tags: ['warning'],
    scout_id,
    job_name: claim.name,
    relative_path: job.relative_path,
    error: job.config_error ?? '',
  });
}
