// The restores' V8 settings (src/scout/restore/restore-v8-settings.ts): which flags they set and
// when. What the room buys (full collections 52–57 → 15–16 in a 1 GiB restore, V8's helper
// threads 1.1–1.8 → 0.2–0.6 CPU-s) depends on V8's task timing, so it is measured by the bench
// and written in that module, not asserted here: a count of collections passed or failed with
// the machine's load.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { keepOldGenerationTight, TIGHT_OLD_GENERATION } from '../../src/scout/old-generation.ts';
import { applyRestoreV8Settings, ROOMY, roomForRuns } from '../../src/scout/restore/restore-v8-settings.ts';

test('this Node knows the flags (V8 ignores an unknown one set at run time, but refuses it at start)', () => {
  for (const flag of [ROOMY, TIGHT_OLD_GENERATION]) {
    const run = spawnSync(process.execPath, [flag, '-e', '0'], { encoding: 'utf8' });
    assert.equal(run.status, 0, `${flag}: ${run.stderr}`);
  }
  const unknown = spawnSync(process.execPath, ['--heap-growing-percentage=300', '-e', '0'], {
    encoding: 'utf8',
  });
  assert.notEqual(unknown.status, 0, 'an unknown flag must be refused, or the check above proves nothing');
});

test('the restore CLI asks for the room at its start', () => {
  const set: string[] = [];
  applyRestoreV8Settings((flags) => set.push(flags));
  assert.deepEqual(set, [ROOMY]);
});

test("the Scout keeps its old generation's room tight from its start (issue #27)", () => {
  const set: string[] = [];
  keepOldGenerationTight((flags) => set.push(flags));
  assert.deepEqual(set, [TIGHT_OLD_GENERATION]);
  assert.match(TIGHT_OLD_GENERATION, /^--heap-growing-percent=(\d+)$/);
  assert.ok(
    Number(/=(\d+)/.exec(TIGHT_OLD_GENERATION)?.[1]) < Number(/=(\d+)/.exec(ROOMY)?.[1]),
    'the Scout has less room than a restore',
  );
});

test("the Scout's own restores have the room while any runs, and the Scout's tight room after the last", async () => {
  const set: string[] = [];
  const withRoom = roomForRuns((flags) => set.push(flags));
  let release = () => {};
  const first = withRoom(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
  assert.deepEqual(set, [ROOMY], 'the first run in sets the room');
  const second = withRoom(async () => {
    throw new Error('the second restore failed');
  });
  await assert.rejects(second, /the second restore failed/);
  assert.deepEqual(set, [ROOMY], 'a run that ends while another still runs leaves the room');
  release();
  assert.equal(await first, 'first');
  assert.deepEqual(set, [ROOMY, TIGHT_OLD_GENERATION], 'the last run out gives the room back');
  await assert.rejects(
    withRoom(async () => {
      throw new Error('alone, and failed');
    }),
  );
  assert.deepEqual(
    set,
    [ROOMY, TIGHT_OLD_GENERATION, ROOMY, TIGHT_OLD_GENERATION],
    'a failed run alone gives it back too',
  );
});
