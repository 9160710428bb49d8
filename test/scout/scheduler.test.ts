// The scheduler's run-now is observable: run_now_requested stays true from the request until
// the cycle starts on its first job (or ends without one), and a per-job run-now passes only
// that job to the cycle. A real runner; the backup cycle is a stand-in the test steps through.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DiscoveredJob } from '../../src/scout/jobs/discovery.ts';
import { createRunner, type OperationContext } from '../../src/scout/schedule/runner.ts';
import { createScheduler } from '../../src/scout/schedule/scheduler.ts';

/** A cycle that waits for `go` before starting on its first job, and records what it was given. */
function steppedCycle() {
  let go: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    go = resolve;
  });
  const calls: { trigger: string; only: DiscoveredJob[] | undefined }[] = [];
  let ended: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  return {
    go,
    done,
    calls,
    async cycle(trigger: string, ctx: OperationContext, only?: DiscoveredJob[]) {
      calls.push({ trigger, only });
      await gate;
      ctx.progress({ job_name: only?.[0]?.config?.job_name ?? 'docs', phase: 'scanning' });
      await new Promise((r) => setTimeout(r, 10));
      ended();
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('scheduler run-now', () => {
  test('run_now_requested is true until the cycle starts on a job', async () => {
    const runner = createRunner();
    const backup = steppedCycle();
    const scheduler = createScheduler({ runner, backup });
    assert.equal(scheduler.runNowRequested(), false);
    assert.equal(scheduler.runNow(), 'queued');
    await tick();
    assert.equal(scheduler.runNowRequested(), true, 'requested while the cycle has not started a job');
    assert.equal(runner.current()?.kind, 'cycle');
    assert.equal(scheduler.runNow(), 'already_running');
    backup.go();
    await backup.done;
    assert.equal(scheduler.runNowRequested(), false, 'cleared once the first job started');
    assert.deepEqual(backup.calls, [{ trigger: 'run_now', only: undefined }]);
  });

  test('a cycle that ends without a job clears it too', async () => {
    const runner = createRunner();
    const scheduler = createScheduler({ runner, backup: { cycle: async () => {} } });
    scheduler.runNow();
    while (runner.busy()) await tick();
    assert.equal(scheduler.runNowRequested(), false);
  });

  test("one job's run-now passes that job alone and names it in the operation", async () => {
    const runner = createRunner();
    const backup = steppedCycle();
    const scheduler = createScheduler({ runner, backup });
    const job = { relative_path: 'docs', config: { job_name: 'docs' } } as unknown as DiscoveredJob;
    assert.equal(scheduler.runNow(job), 'queued');
    assert.equal(runner.current()?.job_name, 'docs');
    backup.go();
    await backup.done;
    assert.deepEqual(backup.calls, [{ trigger: 'run_now', only: [job] }]);
  });
});

describe('runner', () => {
  test('afterEach runs once each operation has ended, failed or not, before the next can start', async () => {
    const seen: string[] = [];
    const runner = createRunner({ afterEach: () => seen.push(`after, busy ${runner.busy()}`) });
    await runner.run('cycle', null, async () => {
      seen.push('work');
    });
    await assert.rejects(
      runner.run('cycle', null, async () => {
        seen.push('failing work');
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual(seen, ['work', 'after, busy true', 'failing work', 'after, busy true']);
    assert.equal(runner.busy(), false);
  });

  test('an afterEach that throws does not keep the runner busy', async () => {
    const runner = createRunner({
      afterEach: () => {
        throw new Error('after');
      },
    });
    assert.deepEqual(await runner.run('cycle', null, async () => 1), { status: 'done', result: 1 });
    assert.equal(runner.busy(), false);
  });
});
