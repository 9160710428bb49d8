import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/scout/young-generation.ts', import.meta.url));

/** New space (MiB) after bursts of young objects, in a fresh process, with or without the setting. */
function newSpaceAfterBursts(keepSmall: boolean): number {
  const script = `
    const v8 = await import('node:v8');
    if (${keepSmall}) (await import(${JSON.stringify(MODULE)})).keepYoungGenerationSmall();
    let keep = [];
    for (let i = 0; i < 6e6; i += 1) {
      keep.push({ i, text: 'x' + i });
      if (keep.length > 100000) keep = [];
    }
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(space.space_size / 2 ** 20);
  `;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

test('the Scout keeps its young generation near the size it started with (issue #27)', () => {
  // Without the setting V8 grows it to 16 MiB or more and keeps it (32 MiB in the Scout).
  assert.ok(newSpaceAfterBursts(false) >= 16, 'V8 did not grow new space: the check would prove nothing');
  const kept = newSpaceAfterBursts(true);
  assert.ok(kept <= 8, `new space grew to ${kept} MiB`);
});
