import assert from 'node:assert/strict';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { alignedBuffer } from '../../src/core/aligned-buffer.ts';
import { ownsMemory, releaseNow } from '../../src/core/release-memory.ts';
import { PiecePool } from '../../src/scout/restore/piece-pool.ts';

const MIB = 1024 * 1024;

/**
 * A read with O_DIRECT goes from the disk straight into the caller's memory, which Linux then
 * requires to be aligned to the device's logical block (512 or 4096 bytes; EINVAL otherwise):
 * a way to see a buffer's address alignment from JavaScript without timing anything.
 */
function directRead(into: Buffer): number | string {
  const dir = mkdtempSync(join(tmpdir(), 'backupd-aligned-'));
  try {
    const file = join(dir, 'data');
    writeFileSync(file, Buffer.alloc(MIB, 7));
    const fd = openSync(file, constants.O_RDONLY | constants.O_DIRECT);
    try {
      return readSync(fd, into, 0, MIB, 0);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? String(error);
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an aligned buffer starts on a block boundary, where memory 16 bytes further does not (issue #27)', () => {
  const aligned = alignedBuffer(MIB);
  assert.equal(aligned.length, MIB);
  assert.equal(directRead(aligned), MIB, 'a direct read into the aligned buffer');
  assert.ok(aligned.every((byte) => byte === 7));
  // The case it replaces: a 1 MiB malloc block starts 16 bytes into its mapping (malloc's
  // header), which the check must see; shown with a view 16 bytes in (a malloc block's own
  // address depends on malloc's state: from its heap it may happen to be aligned).
  assert.equal(directRead(alignedBuffer(MIB + 4096).subarray(16, 16 + MIB)), 'EINVAL');
});

test('an aligned buffer is its own memory: freed at once, and transferred to a thread and back whole', async () => {
  const freed = alignedBuffer(MIB);
  assert.ok(ownsMemory(freed));
  releaseNow(freed);
  assert.equal(freed.buffer.byteLength, 0);

  const block = alignedBuffer(MIB).fill(3);
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.once('message', (memory) => {
       new Uint8Array(memory).fill(4, 0, 16);
       parentPort.postMessage(memory, [memory]);
     });`,
    { eval: true },
  );
  try {
    const back = new Promise<ArrayBuffer>((resolve) => worker.once('message', resolve));
    worker.postMessage(block.buffer, [block.buffer as ArrayBuffer]);
    assert.equal(block.buffer.byteLength, 0, 'moved, not copied');
    const returned = Buffer.from(await back);
    assert.equal(returned.length, MIB);
    assert.equal(returned[15], 4);
    assert.equal(returned[16], 3);
    assert.equal(directRead(returned), MIB, 'still aligned after the round trip');
  } finally {
    await worker.terminate();
  }
});

test("the blocks the kernel reads a restore's snapshot into are aligned", () => {
  const restore = new PiecePool({ size: MIB, keep: 2 });
  for (const block of [restore.take(), restore.take()]) {
    assert.ok(block);
    assert.equal(directRead(block), MIB);
  }
});
