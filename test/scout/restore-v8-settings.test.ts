// The restore CLI's V8 settings (src/scout/restore/restore-v8-settings.ts): a real restore of a
// ~100 MiB snapshot made by the real tools, in a fresh process, counting V8's full collections.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { scratch } from '../helpers/files.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const { work } = scratch('backupd-restore-v8-');
after(() => rmSync(work, { recursive: true, force: true }));
const skip = skipUnlessPrograms(['tar', 'zstd', 'age']);
const source = (path: string) => fileURLToPath(new URL(`../../src/scout/${path}`, import.meta.url));

/** Full collections during the restore of `archive` into a new folder, with or without the restore's settings. */
function fullCollections(archive: string, keyFile: string, withSettings: boolean, dest: string): number {
  const script = `
    const { constants, PerformanceObserver } = await import('node:perf_hooks');
    const v8 = await import('node:v8');
    const { applyRestoreV8Settings } = await import(${JSON.stringify(source('restore/restore-v8-settings.ts'))});
    const { keepYoungGenerationSmall } = await import(${JSON.stringify(source('young-generation.ts'))});
    const { restoreArchive } = await import(${JSON.stringify(source('restore/restorer.ts'))});
    const { pooledFileStream } = await import(${JSON.stringify(source('restore/pooled-file.ts'))});
    const { readKeyFile } = await import(${JSON.stringify(source('keys/identity-file.ts'))});
    if (${withSettings}) applyRestoreV8Settings();
    else keepYoungGenerationSmall();
    // One full collection first, as a long restore has had: V8's first limit is a start-up one.
    v8.setFlagsFromString('--expose-gc');
    (await import('node:vm')).runInNewContext('gc')();
    let full = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full += 1;
    }).observe({ entryTypes: ['gc'] });
    await restoreArchive({ source: pooledFileStream(${JSON.stringify(archive)}), keys: await readKeyFile(${JSON.stringify(keyFile)}), dest: ${JSON.stringify(dest)}, listFiles: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    console.log(full);
  `;
  return Number(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'warn' },
    }),
  );
}

test('the restore CLI lets the old generation grow before V8 marks it again (issue #27)', { skip }, () => {
  const key = generateScoutKey();
  const keyFile = join(work, 'key.txt');
  writeFileSync(keyFile, `${key.ageIdentity}\n`, { mode: 0o600 });
  const tree = join(work, 'tree');
  mkdirSync(join(tree, 'small'), { recursive: true });
  // 96 MiB that zstd cannot shrink, and small files: the bytes of the restore's buffers.
  const block = Buffer.allocUnsafe(24 * 1024 * 1024);
  for (let i = 0; i < 4; i += 1) writeFileSync(join(tree, `big-${i}.bin`), randomFillSync(block));
  for (let i = 0; i < 500; i += 1) writeFileSync(join(tree, 'small', `f${i}.txt`), `line ${i}\n`.repeat(i));
  const archive = join(work, 'snapshot.tar.zst.age');
  execFileSync(
    'sh',
    ['-c', 'tar --format=posix -cf - . | zstd -q -3 | age -r "$0" > "$1"', key.ageRecipient, archive],
    {
      cwd: tree,
    },
  );
  // Without the settings V8 marks again soon after each collection, but how soon depends on
  // its tasks' timing on a loaded machine: up to three tries to see it (4–13 in 1 try here).
  let without = 0;
  for (let attempt = 0; attempt < 3 && without < 3; attempt += 1) {
    without = Math.max(without, fullCollections(archive, keyFile, false, join(work, `without-${attempt}`)));
  }
  assert.ok(
    without >= 3,
    `only ${without} full collections without the settings: the check would prove nothing`,
  );
  const withSettings = fullCollections(archive, keyFile, true, join(work, 'with'));
  assert.ok(
    withSettings * 2 <= without,
    `${withSettings} full collections with the settings, ${without} without`,
  );
});
