// The restore's record of the files it wrote (src/scout/restore/own-files.ts): a hard link may
// only point at one of them. Inode numbers are kept in a compact hash set of 32-inode words
// (issue #27 item 4).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InodeSet, OwnFiles } from '../../src/scout/restore/own-files.ts';

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

test('a million files of a fresh file system: every inode found, none of their neighbours, in under 1 MiB', () => {
  // As a restore into a fresh ext4 numbers them: a run per folder, folders apart.
  const set = new InodeSet();
  const folders = 10_000;
  const perFolder = 100;
  const first = (folder: number) => 12 + folder * 131;
  for (let folder = 0; folder < folders; folder += 1) {
    for (let i = 0; i < perFolder; i += 1) set.add(first(folder) + i);
  }
  for (let folder = 0; folder < folders; folder += 1) {
    for (let i = 0; i < perFolder; i += 1) assert.ok(set.has(first(folder) + i));
    assert.ok(!set.has(first(folder) - 1), `before folder ${folder}`);
    assert.ok(!set.has(first(folder) + perFolder), `after folder ${folder}`);
  }
  // One slot per inode (the set this replaced) took 8 MiB here.
  assert.ok(set.tableBytes <= 1024 * 1024, `${set.tableBytes} bytes`);
});

test('a dry run remembers paths', () => {
  const own = new OwnFiles();
  own.addPath('a/b');
  assert.ok(own.hasPath('a/b'));
  assert.ok(!own.hasPath('a'));
});
