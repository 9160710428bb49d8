import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/server.ts';

// One character above U+007F made V8 hold the whole bundle's source as two-byte text: 10.4 MiB
// of every backupd process instead of 5.2 (scripts/build.ts, asciiOnly; issue #27).
test('the built bundles are ASCII only, so V8 holds their source at one byte per character', (t) => {
  const bundles = ['dist/backupd.mjs', 'dist/sea/backupd.cjs'].map((path) => join(ROOT, path));
  if (!existsSync(bundles[0] as string)) {
    if (process.env.CI === 'true') assert.fail('dist/backupd.mjs is missing: run node scripts/build.ts');
    t.skip('dist/backupd.mjs is not built (node scripts/build.ts)');
    return;
  }
  for (const bundle of bundles.filter((path) => existsSync(path))) {
    const bytes = readFileSync(bundle);
    const at = bytes.findIndex((byte) => byte > 0x7f);
    assert.equal(at, -1, `${bundle} has a non-ASCII byte at ${at}: ${bytes.subarray(at - 40, at + 10)}`);
  }
});
