// The restore's record of the files it wrote (src/scout/restore/own-files.ts): a hard link may
// only point at one of them. Inode numbers are kept in a compact hash set (issue #27 item 4).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OwnFiles } from '../../src/scout/restore/own-files.ts';

test('a restore remembers every inode it wrote, on each device, through the table growing', () => {
  const own = new OwnFiles();
  // Consecutive numbers (a new folder's files), scattered ones, 0, and numbers past 32 bits.
  const written: number[] = [];
  for (let i = 0; i < 50_000; i += 1) written.push(1_000_000 + i);
  for (let i = 0; i < 20_000; i += 1) written.push((i * 2_654_435_761) % 0xfffffff0);
  written.push(0, 0xfffffffe, 0xffffffff, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER);
  for (const ino of written) own.addInode({ dev: 2049, ino });
  own.addInode({ dev: 66, ino: 5 });
  for (const ino of written) assert.ok(own.hasInode({ dev: 2049, ino }), `inode ${ino}`);
  assert.ok(own.hasInode({ dev: 66, ino: 5 }));
  // Not written: other numbers, and the same numbers on another device.
  for (const ino of [999_999, 1_050_000, 0xfffffffd, 2 ** 40 + 8]) {
    assert.ok(!own.hasInode({ dev: 2049, ino }), `inode ${ino} was not written`);
  }
  assert.ok(!own.hasInode({ dev: 66, ino: 1_000_000 }));
  assert.ok(!own.hasInode({ dev: 7, ino: 5 }));
});

test('a dry run remembers paths', () => {
  const own = new OwnFiles();
  own.addPath('a/b');
  assert.ok(own.hasPath('a/b'));
  assert.ok(!own.hasPath('a'));
});
