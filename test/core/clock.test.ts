import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { clock, DAY_MS, fixedClock } from '../../src/core/clock.ts';
import { ROOT } from '../helpers/server.ts';

// The movable clock is for tests: honoured when backupd runs from the source (as the test
// servers do), absent from the bundle and the single executables that ship.
const dir = mkdtempSync(join(tmpdir(), 'backupd-clock-'));
const clockFile = join(dir, 'clock');
writeFileSync(clockFile, String(DAY_MS));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What `script` prints, run in a separate process with the clock file set. */
function withClockFile(script: string): string {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, BACKUPD_TEST_CLOCK_FILE: clockFile },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return out.trim();
}

/** clock.now() minus the real time, as a separate process with the clock file set sees it. */
const offsetSeenBy = (script: string): number => Number(withClockFile(script));

describe('clock', () => {
  test('from the source, the test clock file moves now() on every read', () => {
    const offset = offsetSeenBy(
      "const { clock } = await import('./src/core/clock.ts'); console.log(clock.now() - Date.now());",
    );
    assert.ok(Math.abs(offset - DAY_MS) < 5_000, `offset ${offset}`);
  });

  test('from the source, a wait on the test clock ends once the clock file moves past it; an abort ends it at once', () => {
    // An hour's wait each: the process ends only if moving the clock and the abort end them.
    const out = withClockFile(`
      const { writeFileSync } = await import('node:fs');
      const { clock } = await import('./src/core/clock.ts');
      const waited = clock.sleep(3_600_000).then(() => 'ended');
      writeFileSync(process.env.BACKUPD_TEST_CLOCK_FILE, String(${DAY_MS} + 3_600_000));
      const stop = new AbortController();
      const cancelled = clock.sleep(3_600_000, stop.signal).catch((error) => error.name);
      stop.abort();
      console.log(JSON.stringify(await Promise.all([waited, cancelled])));
      writeFileSync(process.env.BACKUPD_TEST_CLOCK_FILE, String(${DAY_MS}));
    `);
    assert.deepEqual(JSON.parse(out), ['ended', 'AbortError']);
  });

  test('without the test clock a wait is the plain timer, and an abort ends it at once', async () => {
    const stop = new AbortController();
    const waited = clock.sleep(3_600_000, stop.signal);
    stop.abort();
    await assert.rejects(waited, { name: 'AbortError' });
  });

  test('the built bundle reads the real time and holds no test clock', (t) => {
    const bundle = join(ROOT, 'dist/backupd.mjs');
    if (!existsSync(bundle)) {
      if (process.env.CI === 'true') assert.fail('dist/backupd.mjs is missing: run node scripts/build.ts');
      t.skip('dist/backupd.mjs is not built (node scripts/build.ts)');
      return;
    }
    const text = readFileSync(bundle, 'utf8');
    assert.ok(!text.includes('BACKUPD_TEST_CLOCK_FILE'), 'the bundle still reads BACKUPD_TEST_CLOCK_FILE');
    const sea = join(ROOT, 'dist/sea/backupd.cjs');
    if (existsSync(sea)) {
      assert.ok(!readFileSync(sea, 'utf8').includes('BACKUPD_TEST_CLOCK_FILE'), 'the executable reads it');
    }
  });

  test('fixedClock stands still until moved', () => {
    const c = fixedClock(1_000);
    assert.equal(c.now(), 1_000);
    c.advance(DAY_MS);
    assert.equal(c.now(), 1_000 + DAY_MS);
    assert.equal(c.date().getTime(), 1_000 + DAY_MS);
  });

  test('a wait on a fixedClock moves it by the wait at once', async () => {
    const c = fixedClock(1_000);
    await c.sleep(4_000);
    assert.equal(c.now(), 5_000);
  });
});
