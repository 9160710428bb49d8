import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/core/release-memory.ts', import.meta.url));

/**
 * In a fresh process: 64 MiB of 64 KiB blocks, each followed by a small one kept alive (so a
 * freed block cannot merge into the top of the heap, which glibc trims on its own), the large
 * ones freed; resident MiB before and after `returnFreedMemory` (or nothing, without it).
 */
function residentAround(trim: boolean): { before: number; after: number; released: boolean } {
  const script = `
    const { releaseNow, returnFreedMemory } = await import(${JSON.stringify(MODULE)});
    // glibc maps a large block on its own until one such block is freed: free one of 16 MiB so
    // the 64 KiB blocks below come from the heap whatever ran before.
    releaseNow(Buffer.allocUnsafeSlow(16 * 2 ** 20).fill(1));
    const kept = [];
    const freed = [];
    for (let i = 0; i < 1024; i += 1) {
      freed.push(Buffer.allocUnsafeSlow(64 * 1024).fill(1));
      kept.push(Buffer.allocUnsafeSlow(2048).fill(2));
    }
    for (const block of freed.splice(0)) releaseNow(block);
    const mib = () => process.memoryUsage.rss() / 2 ** 20;
    const before = mib();
    const released = ${trim} ? returnFreedMemory() : false;
    console.log(JSON.stringify({ before, after: mib(), released, kept: kept.length }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

test('returnFreedMemory gives the pages of blocks freed into malloc back to the system (issue #27)', {
  skip: process.platform !== 'linux' && 'glibc only',
}, () => {
  const kept = residentAround(false);
  assert.ok(
    kept.after - kept.before > -8,
    `without it malloc already gave back ${kept.before - kept.after} MiB`,
  );
  const trimmed = residentAround(true);
  assert.equal(trimmed.released, true);
  assert.ok(
    trimmed.before - trimmed.after >= 48,
    `resident ${trimmed.before.toFixed(0)} -> ${trimmed.after.toFixed(0)} MiB: the freed 64 MiB stayed`,
  );
});

test('returnFreedMemory may be called again and again', () => {
  const script = `
    const { returnFreedMemory } = await import(${JSON.stringify(MODULE)});
    for (let i = 0; i < 200; i += 1) returnFreedMemory();
    console.log('ok');
  `;
  assert.equal(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(),
    'ok',
  );
});

/**
 * In a fresh process: 40 MiB of 64 KiB buffers that only garbage still points to (the way a
 * finished archive or restore leaves its chunks), each beside a small buffer kept alive;
 * resident MiB before and after `call` (returnFreedMemory or releaseAfterWork).
 */
function residentAroundGarbage(call: 'returnFreedMemory' | 'releaseAfterWork'): {
  before: number;
  after: number;
} {
  const script = `
    const memory = await import(${JSON.stringify(MODULE)});
    memory.releaseNow(Buffer.allocUnsafeSlow(16 * 2 ** 20).fill(1));
    const kept = [];
    let garbage = [];
    for (let i = 0; i < 640; i += 1) {
      garbage.push({ bytes: Buffer.allocUnsafeSlow(64 * 1024).fill(1) });
      kept.push(Buffer.allocUnsafeSlow(2048).fill(2));
    }
    garbage = null;
    const mib = () => process.memoryUsage.rss() / 2 ** 20;
    const before = mib();
    memory.${call}();
    console.log(JSON.stringify({ before, after: mib(), kept: kept.length }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

test('releaseAfterWork also frees what only garbage held, before giving it back (issue #27)', {
  skip: process.platform !== 'linux' && 'glibc only',
}, () => {
  const trimOnly = residentAroundGarbage('returnFreedMemory');
  assert.ok(
    trimOnly.before - trimOnly.after < 16,
    `the buffers were collected already (${trimOnly.before.toFixed(0)} -> ${trimOnly.after.toFixed(0)} MiB): the check would prove nothing`,
  );
  const released = residentAroundGarbage('releaseAfterWork');
  assert.ok(
    released.before - released.after >= 28,
    `resident ${released.before.toFixed(0)} -> ${released.after.toFixed(0)} MiB: the dead 40 MiB stayed`,
  );
});

/**
 * In a fresh process: three worker threads (like an archive's zstd and sealing workers) make
 * some garbage and end; what malloc holds free is returned first, then resident MiB before and
 * after releaseAfterWork.
 */
function residentAroundEndedThreads(): { before: number; after: number } {
  const script = `
    const memory = await import(${JSON.stringify(MODULE)});
    const { Worker } = await import('node:worker_threads');
    const mib = () => process.memoryUsage.rss() / 2 ** 20;
    memory.releaseAfterWork();
    const source = "let keep = []; for (let i = 0; i < 200000; i += 1) { keep.push({ i, list: [i, i, i, i] }); if (keep.length > 1000) keep = []; } process.getBuiltinModule('node:worker_threads').parentPort.postMessage('ready');";
    const threads = [0, 1, 2].map(() => new Worker(source, { eval: true }));
    await Promise.all(threads.map((thread) => new Promise((resolve) => thread.once('message', resolve))));
    await Promise.all(threads.map((thread) => thread.terminate()));
    memory.returnFreedMemory();
    const before = mib();
    memory.releaseAfterWork();
    console.log(JSON.stringify({ before, after: mib() }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

test('releaseAfterWork gives back at once the heap pages V8 pools for 8 s after worker threads end (issue #27)', {
  skip: process.platform !== 'linux' && 'glibc only',
}, () => {
  // Before: 91 -> 90 MiB (the ended threads' ~16 MiB of pages went 8 s later); after: 88 -> 70.
  const { before, after } = residentAroundEndedThreads();
  assert.ok(
    before - after >= 8,
    `resident ${before.toFixed(0)} -> ${after.toFixed(0)} MiB: the ended threads' heap pages stayed`,
  );
});
