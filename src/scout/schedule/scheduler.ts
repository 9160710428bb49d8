import { type ScheduledTask, schedule } from 'node-cron';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { Backup } from './backup.ts';
import type { Runner } from './runner.ts';

const log = logger.child({ mod: 'scout/scheduler' });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Runs a backup cycle on `cron_schedule` (and on run-now), one operation at a time. */
export function createScheduler(deps: { runner: Runner; backup: Backup }) {
  let task: ScheduledTask | null = null;
  let expression = '';
  let runNowRequested = false;
  let lastStartedAt: number | null = null;
  let lastFinishedAt: number | null = null;

  function startCycle(trigger: 'schedule' | 'run_now') {
    return deps.runner.start('cycle', null, async (ctx) => {
      runNowRequested = false;
      lastStartedAt = clock.now();
      try {
        await deps.backup.cycle(trigger, ctx);
      } finally {
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
    runNow(): 'queued' | 'already_running' {
      if (deps.runner.busy()) return 'already_running';
      runNowRequested = true;
      return startCycle('run_now');
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
    runNowRequested: () => runNowRequested,
    stop(): void {
      void task?.stop();
      task = null;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
