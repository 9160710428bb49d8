// The disk store's write batches (src/station/storage/write-batches.ts): blocks from a fixed
// pool, written with O_DIRECT at aligned offsets, the unaligned end of a chunk through the page
// cache and carried into the next block. The file must hold exactly the bytes pushed, from any
// start (inside a 4 KiB block too), in pieces of any size, flushed at any point.

import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BLOCK_BYTES, returnBlock, takeBlock } from '../../../src/station/storage/batch-blocks.ts';
import { openWriteBatches } from '../../../src/station/storage/write-batches.ts';
import { sha256 } from '../../helpers/hashes.ts';

const dir = mkdtempSync(join(tmpdir(), 'backupd-write-batches-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Pushes `data` at `start` in random pieces, draining (as an idle flush does) at random points. */
async function append(path: string, start: number, data: Buffer) {
  const seen = createHash('sha256');
  const positions: number[] = [];
  const batches = await openWriteBatches(path, start, (bytes, position) => {
    seen.update(bytes);
    positions.push(position);
  });
  try {
    for (let at = 0; at < data.length; ) {
      const size = Math.min(data.length - at, randomInt(1, 200_000));
      await batches.push(data.subarray(at, at + size));
      at += size;
      if (randomInt(0, 12) === 0) await batches.drain();
    }
    await batches.drain();
  } finally {
    await batches.close();
  }
  assert.equal(batches.position(), start + data.length);
  if (data.length > 0) assert.equal(positions.at(-1), start + data.length);
  assert.equal(seen.digest('hex'), sha256(data), 'the written callback saw each new byte once, in order');
}

describe('write batches', () => {
  test('the file holds exactly the bytes pushed, from starts inside a 4 KiB block, across blocks', async () => {
    const path = join(dir, 'staged');
    const first = randomBytes(5001);
    writeFileSync(path, first);
    let expected = first;
    for (const size of [2 * BLOCK_BYTES + 777, 4096, 1, BLOCK_BYTES, 123_457]) {
      const more = randomBytes(size);
      await append(path, expected.length, more);
      expected = Buffer.concat([expected, more]);
      assert.equal(sha256(readFileSync(path)), sha256(expected));
    }
  });

  test('past the pool (every block lent) the bytes are written exactly from small plain blocks', async () => {
    const lent = Array.from({ length: 16 }, () => takeBlock());
    try {
      const path = join(dir, 'beyond-pool');
      const first = randomBytes(3333);
      writeFileSync(path, first);
      const more = randomBytes(BLOCK_BYTES + 5555);
      await append(path, first.length, more);
      assert.equal(sha256(readFileSync(path)), sha256(Buffer.concat([first, more])));
    } finally {
      for (const b of lent) returnBlock(b);
    }
  });

  test('bytes read straight into the blocks (room/took) land exactly; a stall writes them in place, in the file before the block is full', async () => {
    const path = join(dir, 'rooms');
    const first = randomBytes(7777);
    writeFileSync(path, first);
    const more = randomBytes(2 * BLOCK_BYTES + 12_345);
    const seen = createHash('sha256');
    const batches = await openWriteBatches(path, first.length, (bytes) => seen.update(bytes));
    let stalled = false;
    try {
      for (let at = 0; at < more.length; ) {
        // The room is handed out before the bytes arrive, as to a socket read that waits.
        const room = batches.room();
        assert.ok(room, 'a room whenever took did not ask to wait');
        if (!stalled && at > BLOCK_BYTES + 5000) {
          // A stalled client: within IDLE_FLUSH_MS what arrived is in the file (bounded wait),
          // and the room handed out before stays the place of the next bytes.
          stalled = true;
          for (let i = 0; i < 100 && batches.position() < first.length + at; i += 1) await sleep(20);
          assert.equal(batches.position(), first.length + at, 'the stalled bytes are written');
          assert.deepEqual(readFileSync(path).subarray(first.length), more.subarray(0, at));
        }
        const n = Math.min(room.length, more.length - at, randomInt(1, 300_000));
        more.copy(room, 0, at, at + n);
        at += n;
        await batches.took(n);
      }
      await batches.drain();
    } finally {
      await batches.close();
    }
    assert.equal(sha256(readFileSync(path)), sha256(Buffer.concat([first, more])));
    assert.equal(seen.digest('hex'), sha256(more), 'each new byte seen once, in order');
  });

  test('an empty chunk writes nothing and keeps the file as it was', async () => {
    const path = join(dir, 'empty');
    const bytes = randomBytes(10_000);
    writeFileSync(path, bytes);
    await append(path, bytes.length, Buffer.alloc(0));
    assert.deepEqual(readFileSync(path), bytes);
  });

  test('blocks come from a bounded pool and go back to it', () => {
    const taken = Array.from({ length: 16 }, () => takeBlock());
    assert.ok(taken.every((b) => b.aligned && b.bytes.length === BLOCK_BYTES));
    const beyond = takeBlock();
    assert.equal(beyond.aligned, false, 'past the pool a writer gets plain memory');
    assert.ok(beyond.bytes.length < BLOCK_BYTES, 'and less of it');
    for (const b of [...taken, beyond]) returnBlock(b);
    const again = Array.from({ length: 16 }, () => takeBlock());
    assert.ok(
      again.every((b) => taken.includes(b)),
      'the same blocks are lent again',
    );
    for (const b of again) returnBlock(b);
  });
});
