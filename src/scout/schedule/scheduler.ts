import { type ScheduledTask, schedule } from 'node-cron';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import type { Backup } from './backup.ts';
import type { OperationContext, Runner } from './runner.ts';

const log = logger.child({ mod: 'scout/scheduler' });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Runs a backup cycle on `cron_schedule` (and on run-now), one operation at a time. */
export function createScheduler(deps: { runner: Runner; backup: Pick<Backup, 'cycle'> }) {
  let task: ScheduledTask | null = null;
  let expression = '';
  let runNowRequested = false;
  let lastStartedAt: number | null = null;
  let lastFinishedAt: number | null = null;

  function startCycle(trigger: 'schedule' | 'run_now', only?: DiscoveredJob) {
    return deps.runner.start('cycle', only?.config?.job_name ?? null, async (ctx) => {
      lastStartedAt = clock.now();
      // A run-now stays requested until the cycle starts on its first job (or ends without one).
      const started = () => {
        if (trigger === 'run_now') runNowRequested = false;
      };
      const watched: OperationContext = {
        signal: ctx.signal,
        progress: (patch) => {
          started();
          ctx.progress(patch);
        },
      };
      try {
        await deps.backup.cycle(trigger, watched, only ? [only] : undefined);
      } finally {
        started();
        lastFinishedAt = clock.now();
      }
    });
  }

  return {
    /** (Re)schedules on a new expression; the same expression keeps its task. */
    apply(cron: string): void {
      if (cron === expression && task) return;
      void task?.stop();
      expression = cron;
      task = schedule(cron, () => {
        if (startCycle('schedule') === 'already_running')
          log.info('scheduled cycle skipped: an operation is running');
      });
    },
    /** A cycle now, of every job or of `only` (a job whose files did not change stays unchanged). */
    runNow(only?: DiscoveredJob): 'queued' | 'already_running' {
      if (deps.runner.busy()) return 'already_running';
      runNowRequested = true;
      return startCycle('run_now', only);
    },
    view() {
      return {
        state: deps.runner.state(),
        cron_schedule: expression,
        next_run_at: task?.getNextRun()?.toISOString() ?? null,
        last_started_at: iso(lastStartedAt),
        last_finished_at: iso(lastFinishedAt),
      };
    },
    /** True from a run-now until its cycle starts on a job. */
    runNowRequested: () => runNowRequested,
    stop(): void {
      void task?.stop();
      task = null;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
