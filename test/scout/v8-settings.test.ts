import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/scout/v8-settings.ts', import.meta.url));

/**
 * A small WebAssembly function (a loop summing n..1) called hot in a fresh process, with or
 * without the Scout's V8 settings applied first, in rounds (V8 tiers up on a background
 * thread): `rounds` of them, or, with `rounds` 0, until V8 re-compiled it with TurboFan (at
 * most 300). Answers which compiler it was left on, and after how many rounds.
 */
function wasmTier(
  scoutSettings: boolean,
  rounds: number,
): { liftoff: boolean; turbofan: boolean; rounds: number } {
  const script = `
    if (${scoutSettings}) (await import(${JSON.stringify(MODULE)})).applyScoutV8Settings();
    const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0,
      7, 5, 1, 1, 102, 0, 0, 10, 27, 1, 25, 1, 1, 127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0, 65, 1,
      107, 34, 0, 13, 0, 11, 32, 1, 11]);
    const { instance } = await WebAssembly.instantiate(bytes);
    const sum = instance.exports.f;
    let round = 0;
    while (${rounds} > 0 ? round < ${rounds} : !%IsTurboFanFunction(sum) && round < 300) {
      for (let i = 0; i < 20000; i += 1) sum(1000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      round += 1;
    }
    console.log(JSON.stringify({ liftoff: %IsLiftoffFunction(sum), turbofan: %IsTurboFanFunction(sum), rounds: round }));
  `;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(out);
}

test("the Scout keeps WebAssembly (fetch's HTTP parser) on V8's baseline compiler (issue #27)", () => {
  // Without the setting V8 re-compiles a hot function with TurboFan on a background thread,
  // whose freed zone raised glibc's trim threshold for the whole process (v8-settings.ts).
  const without = wasmTier(false, 0);
  assert.equal(without.turbofan, true, 'V8 did not tier up: the check would prove nothing');
  const withSettings = wasmTier(true, without.rounds + 5);
  assert.deepEqual([withSettings.liftoff, withSettings.turbofan], [true, false], 'the function left Liftoff');
});
