// SparseWriter (src/scout/restore/sparse-writer.ts) with its writes on the thread pool, as a
// streamed file of a restore uses it: the same bytes and holes as written synchronously, and a
// failed write reported, with nothing left on the pool once settled, and no piece freed by the
// tar reader while a write still reads it.
import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { releaseNow } from '../../src/core/release-memory.ts';
import { SparseWriter } from '../../src/scout/restore/sparse-writer.ts';
import { FREED_HELD } from '../../src/scout/restore/tar-reader.ts';
import { scratch } from '../helpers/files.ts';

const { work, fresh } = scratch('backupd-sparse-writer-');
after(() => rmSync(work, { recursive: true, force: true }));

/** 1 MiB pieces: data, 2 MiB of zeros (a hole), data, and 300 KiB of zeros at the end. */
function pieces(): Buffer[] {
  const data = (fill: number) => Buffer.alloc(1024 * 1024, fill);
  return [data(1), Buffer.alloc(1024 * 1024), Buffer.alloc(1024 * 1024), data(2), Buffer.alloc(300 * 1024)];
}

test('writes on the thread pool give the same bytes and holes as synchronous ones', async () => {
  const results = [];
  for (const inFlight of [0, 2]) {
    const path = join(fresh('out'), 'file');
    const fd = openSync(path, 'wx');
    const writer = new SparseWriter(fd, { inFlight });
    for (const piece of pieces()) await writer.write(piece);
    await writer.settle();
    writer.finish();
    const { blocks, size } = fstatSync(fd);
    closeSync(fd);
    results.push({ bytes: readFileSync(path), blocks, size });
  }
  const [sync, pooled] = results as [(typeof results)[0], (typeof results)[0]];
  assert.equal(pooled.size, sync.size);
  assert.ok(pooled.bytes.equals(Buffer.concat(pieces())));
  // Only the 2 MiB of data take blocks (512-byte units), as when written synchronously.
  assert.equal(pooled.blocks, sync.blocks);
  assert.ok(pooled.blocks * 512 < 3 * 1024 * 1024, `${pooled.blocks} blocks`);
});

test('a write that fails on the pool is reported, and settle waits for every write', async () => {
  const path = join(fresh('out'), 'file');
  closeSync(openSync(path, 'wx'));
  const fd = openSync(path, 'r'); // not open for writing: every write fails (EBADF)
  const writer = new SparseWriter(fd, { inFlight: 2 });
  await assert.rejects(async () => {
    for (const piece of pieces()) await writer.write(piece);
    await writer.settle();
    writer.finish();
  }, /EBADF/);
  await writer.settle();
  closeSync(fd);
});

test('a piece of data followed by holes is not freed under its write: the writer waits once inFlight pieces were given since', async () => {
  // As a restore streams a sparse file (a VM image: 4 KiB of data, then MiBs of zeros), with
  // the tar reader freeing each piece once FREED_HELD newer ones were read (tar-reader.ts).
  const path = join(fresh('out'), 'file');
  const fd = openSync(path, 'wx');
  const writer = new SparseWriter(fd, { inFlight: 4 });
  const held: Buffer[] = [];
  const waited: boolean[] = [];
  const PIECE = 256 * 1024;
  for (let i = 0; i < 3 * FREED_HELD; i += 1) {
    const piece = Buffer.allocUnsafeSlow(PIECE).fill(i === 0 ? 0x5a : 0);
    held.push(piece);
    const room = writer.write(piece);
    waited.push(room !== undefined);
    if (room) await room;
    if (held.length > FREED_HELD) releaseNow(held.shift() as Buffer);
  }
  await writer.settle();
  writer.finish();
  closeSync(fd);
  // The first piece's write cannot have run before this loop let the event loop turn: the
  // writer must hold the loop back by the time 4 more pieces (all holes) were given.
  assert.ok(waited.slice(0, 5).includes(true), `waits: ${waited.join(' ')}`);
  const bytes = readFileSync(path);
  assert.equal(bytes.length, 3 * FREED_HELD * PIECE);
  assert.ok(
    bytes.subarray(0, PIECE).every((b) => b === 0x5a),
    'the data piece was written whole',
  );
  assert.ok(bytes.subarray(PIECE).every((b) => b === 0));
});
