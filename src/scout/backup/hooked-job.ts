import { clock } from '../../core/clock.ts';
import type { Hooks } from '../../core/hooks/hooks.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { describeSkipped } from '../jobs/skipped.ts';
import type { OperationContext } from '../schedule/runner.ts';
import { stateView } from '../state/job-states.ts';
import { backupJob, type JobDeps } from './backup-job.ts';
import type { Trigger } from './trigger.ts';

export type HookedJobDeps = JobDeps & { hooks: Hooks; notifier: Notifier };

/** Runs the pre-hook (a failure skips the job), the job, the post-hook, and notifies on failure. */
export async function hookedJob(
  deps: HookedJobDeps,
  job: DiscoveredJob,
  trigger: Trigger,
  ctx: OperationContext,
): Promise<boolean | null> {
  const name = job.config?.job_name ?? '';
  const settings = await deps.settings.read();
  const facts = {
    event: 'backup',
    job_name: name,
    relative_path: job.relative_path,
    trigger,
    scout_id: settings.scout_id,
    scout_instance_id: deps.instanceId,
  };
  deps.needsAttention.delete(job.relative_path);
  let reached: boolean | null = null;
  const pre = await deps.hooks.pre(facts);
  if (pre.ran && pre.exit_code !== 0) {
    const outcome = pre.timed_out
      ? 'timed out'
      : pre.start_error
        ? `could not start (${pre.start_error})`
        : `exited with ${pre.exit_code}`;
    deps.needsAttention.add(job.relative_path);
    await deps.states.update(job.relative_path, name, {
      lastStatus: 'failed',
      lastAttemptAt: clock.now(),
      lastErrorCode: 'hook_failed',
      // The output is not kept (src/core/hooks/hooks.ts): its size tells whether there was any.
      lastError: `the pre-backup hook (hook_pre_command) ${outcome}, so the job was skipped; fix the hook or its cause (it wrote ${pre.output_bytes} bytes of output, which backupd does not keep: send it to a file in the command to read it)`,
    });
  } else {
    reached = await backupJob(deps, job, trigger, ctx);
  }
  const state = await deps.states.get(job.relative_path);
  await deps.hooks.post({
    ...facts,
    status: state?.lastStatus ?? 'failed',
    stored_as: state?.lastStoredAs ?? '',
    error: state?.lastError ?? '',
  });
  const skipped = stateView(state).last_skipped;
  if (state?.lastStatus === 'uploaded' && skipped) {
    deps.notifier.notify({
      ...facts,
      event: 'job_incomplete',
      source: 'backup',
      title: `Backup of ${name} is incomplete`,
      summary: `${name} on ${settings.scout_id}: snapshot ${state.lastStoredAs ?? ''} stored, but ${describeSkipped(skipped)}`,
      tags: ['warning'],
      skipped_count: skipped.count,
      skipped_paths: skipped.paths,
    });
  }
  if (state?.lastStatus === 'failed') {
    const attention = deps.needsAttention.has(job.relative_path);
    deps.notifier.notify({
      ...facts,
      event: attention ? 'job_needs_attention' : 'job_failed',
      source: 'backup',
      title: attention ? `Backup of ${name} needs you` : `Backup of ${name} failed`,
      summary: `${name} on ${settings.scout_id}: ${state.lastError ?? 'failed'}`,
      priority: 'high',
      tags: attention ? ['warning'] : ['x'],
      error: state.lastError ?? '',
    });
  }
  return reached;
}
