// Restore into folders the restore made itself (issue #27 item 3): files there are created in
// place (O_EXCL, no temp file and rename), yet a name someone takes meanwhile is still never
// written through, a file that fails half-way is removed, a hard link only ever joins a file
// the restore wrote (by inode, so a file swapped in at that path is refused), and a restore
// of many files counts them instead of naming each one.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { DiskFullError } from '../../src/scout/restore/entry-problems.ts';
import { type RestoreOptions, restoreArchive } from '../../src/scout/restore/restorer.ts';
import { snapshotFailure } from '../../src/scout/restore/snapshot-failure.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { scratch } from '../helpers/files.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);
const { work, fresh } = scratch('backupd-restore-new-');
const key = generateScoutKey();

/** `tar --format=posix --sort=name <args> | zstd | age`: entries in a known order. */
const toolArchive = (cwd: string, args: string[]) =>
  archiveWithTools(cwd, ['--sort=name', ...args], key.ageRecipient);

function restore(archive: Buffer, dest: string, extra: Partial<RestoreOptions> = {}) {
  return restoreArchive({ source: Readable.from([archive]), keys: [key], dest, ...extra });
}

describe('restore into folders it made', { skip }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  /**
   * Restores new/a.txt then new/b.txt, and plants a link to a file outside at new/b.txt once
   * a.txt is written: b.txt must replace the link, never write through it.
   */
  async function plantedBetween(a: string | Buffer, b: string | Buffer, into = { existingDest: false }) {
    const src = fresh('src');
    mkdirSync(join(src, 'new'));
    writeFileSync(join(src, 'new', 'a.txt'), a);
    writeFileSync(join(src, 'new', 'b.txt'), b);
    const outside = fresh('outside');
    writeFileSync(join(outside, 'victim.txt'), 'untouched');
    // An existing, empty destination (a mount point, a folder made for the restore): `new` is
    // made by the restore there, so it is the restore's own folder all the same.
    const dest = into.existingDest ? fresh('dest') : join(fresh('dest'), 'job');
    let planted = false;
    const plan = await restore(toolArchive(src, ['new']), dest, {
      onProgress: () => {
        if (planted) return;
        planted = true; // after new/a.txt: b.txt's name is taken by a link to a file outside
        symlinkSync(join(outside, 'victim.txt'), join(dest, 'new', 'b.txt'));
      },
    });
    assert.deepEqual(plan.problems, []);
    assert.deepEqual([plan.add, plan.replace], [['new/a.txt'], ['new/b.txt']]);
    assert.ok(lstatSync(join(dest, 'new', 'b.txt')).isFile());
    assert.deepEqual(readFileSync(join(dest, 'new', 'b.txt')), Buffer.from(b));
    assert.equal(readFileSync(join(outside, 'victim.txt'), 'utf8'), 'untouched');
  }

  test('a name taken meanwhile (a symlink planted in the new folder) is replaced, not written through', async () => {
    // Both are streamed (over 256 KiB), so they are created on the restore's own thread.
    await plantedBetween(Buffer.alloc(300_000, 'first'), Buffer.alloc(300_000, 'second'));
  });

  test("a small file's name taken before the writing thread creates it is replaced, not written through", async () => {
    // a.txt is streamed and reported at once; small b.txt then goes to the writing thread
    // (src/scout/restore/file-batches.ts), whose O_EXCL create finds the link.
    await plantedBetween(Buffer.alloc(300_000, 'first'), 'second');
  });

  test('in a folder made inside an existing destination, planted names are replaced, not written through', async () => {
    await plantedBetween(Buffer.alloc(300_000, 'first'), Buffer.alloc(300_000, 'second'), {
      existingDest: true,
    });
    await plantedBetween(Buffer.alloc(300_000, 'first'), 'second', { existingDest: true });
  });

  test('a file cut short in a new folder is removed: nothing half-written stays', async () => {
    const src = fresh('src');
    mkdirSync(join(src, 'new'));
    writeFileSync(join(src, 'new', 'big.bin'), Buffer.alloc(300_000, 3));
    // The tar stream ends in the middle of big.bin (compressed and encrypted correctly).
    const archive = execFileSync(
      'sh',
      ['-c', 'tar --format=posix -cf - new | head -c 100000 | zstd -q -3 | age -r "$0"', key.ageRecipient],
      { cwd: src },
    );
    const dest = join(fresh('dest'), 'job');
    await assert.rejects(restore(archive, dest), /truncated/);
    assert.ok(!existsSync(join(dest, 'new', 'big.bin')), 'no partial big.bin');
  });

  test('a hard link whose target was swapped after the restore wrote it is refused', async () => {
    const src = fresh('src');
    writeFileSync(join(src, 'f'), 'shared');
    linkSync(join(src, 'f'), join(src, 'g'));
    const dest = join(fresh('dest'), 'job');
    const planted = join(fresh('planted'), 'secret');
    let swapped = false;
    const plan = await restore(toolArchive(src, ['f', 'g']), dest, {
      onProgress: () => {
        if (swapped) return;
        swapped = true; // after f: a file the restore did not write takes f's name
        writeFileSync(planted, 'not from the snapshot');
        renameSync(planted, join(dest, 'f'));
      },
    });
    assert.deepEqual(plan.problems, [
      { path: 'g', message: 'not restored: hard link to "f", which is not a file this restore wrote' },
    ]);
    assert.equal(statSync(join(dest, 'f')).nlink, 1, 'the swapped-in file got no second name');
    assert.ok(!existsSync(join(dest, 'g')));
  });

  test('a thousand small files over many batches and both writing threads land whole, with their links and times', async () => {
    const src = fresh('src');
    mkdirSync(join(src, 'd'));
    mkdirSync(join(src, 'z'));
    const T = 1_700_000_000;
    for (let i = 0; i < 1000; i += 1) {
      const file = join(src, 'd', `f${String(i).padStart(4, '0')}`);
      // Sizes up to ~4 KiB: batches go at 128 files, so the files span eight batches and more.
      writeFileSync(file, Buffer.alloc((i * 37) % 4096, i % 251));
      utimesSync(file, T + i, T + i);
      chmodSync(file, i % 2 === 0 ? 0o640 : 0o604);
      // Links in a later folder to files of earlier batches: each joins the file written.
      if (i % 100 === 0) linkSync(file, join(src, 'z', `l${i}`));
    }
    const dest = join(fresh('dest'), 'job');
    const plan = await restore(toolArchive(src, ['d', 'z']), dest, { listFiles: false });
    assert.deepEqual(plan.problems, []);
    assert.equal(plan.counts.add, 1010);
    for (let i = 0; i < 1000; i += 1) {
      const name = `f${String(i).padStart(4, '0')}`;
      const restored = join(dest, 'd', name);
      assert.deepEqual(readFileSync(restored), readFileSync(join(src, 'd', name)), name);
      const stat = statSync(restored);
      assert.equal(stat.mtimeMs, (T + i) * 1000, `${name} keeps its time`);
      assert.equal(stat.mode & 0o777, i % 2 === 0 ? 0o640 : 0o604, `${name} keeps its mode`);
      if (i % 100 === 0) {
        assert.equal(stat.nlink, 2, `${name} has its link`);
        assert.equal(statSync(join(dest, 'z', `l${i}`)).ino, stat.ino);
      }
    }
  });

  test('a disk that fills under the writing threads stops the restore, said as a full disk at an entry; no file is left half-written', async (t) => {
    const src = fresh('src');
    mkdirSync(join(src, 'd'));
    // 600 files of 3 KiB (one 4 KiB page each on tmpfs, ~2.4 MiB) into a 1 MiB tmpfs.
    for (let i = 0; i < 600; i += 1)
      writeFileSync(join(src, 'd', `f${String(i).padStart(3, '0')}`), Buffer.alloc(3072, i % 251));
    const mountPoint = fresh('full');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
    if (mounted.status !== 0) {
      if (process.env.CI === 'true') assert.fail(`cannot mount a tmpfs: ${mounted.stderr}`);
      t.skip('mounting a tmpfs needs root (CAP_SYS_ADMIN)');
      return;
    }
    try {
      const dest = join(mountPoint, 'job');
      const stopped = await restore(toolArchive(src, ['d']), dest).then(
        () => assert.fail('the restore should stop on the full disk'),
        (error: unknown) => error,
      );
      // Said as a full disk, naming the entry (not the /proc/<pid>/fd path written through),
      // and answered as 507 disk_full by the Scout's API and the CLI (snapshot-failure.ts).
      assert.ok(stopped instanceof DiskFullError, String(stopped));
      assert.match(
        stopped.message,
        /^the disk is full \(no space left on device \(ENOSPC\)\) while restoring "d\/f\d{3}"$/,
      );
      const answer = snapshotFailure(stopped);
      assert.equal(answer?.status, 507);
      assert.equal(answer?.code, 'disk_full');
      assert.match(
        answer?.message ?? '',
        /disk the restore writes to is full \(at "d\/f\d{3}"\): free some space/,
      );
      assert.doesNotMatch(answer?.message ?? '', /\/proc\//);
      const left = readdirSync(join(dest, 'd'));
      assert.ok(
        left.length > 0 && left.length < 600,
        `${left.length} files restored before the disk was full`,
      );
      for (const name of left) {
        assert.deepEqual(
          readFileSync(join(dest, 'd', name)),
          readFileSync(join(src, 'd', name)),
          `${name} is whole`,
        );
      }
    } finally {
      spawnSync('umount', [mountPoint]);
    }
  });

  test('listFiles: false counts the files without naming them', async () => {
    const src = fresh('src');
    mkdirSync(join(src, 'd'));
    for (const name of ['one', 'two', 'three']) writeFileSync(join(src, 'd', name), name);
    const archive = toolArchive(src, ['d']);
    const dest = join(fresh('dest'), 'job');
    const first = await restore(archive, dest, { listFiles: false });
    assert.deepEqual([first.add, first.counts], [[], { add: 3, replace: 0, unchanged: 0 }]);
    writeFileSync(join(dest, 'd', 'two'), 'changed');
    const again = await restore(archive, dest, { listFiles: false });
    assert.deepEqual([again.unchanged, again.counts], [[], { add: 0, replace: 1, unchanged: 2 }]);
    assert.deepEqual(readdirSync(join(dest, 'd')).sort(), ['one', 'three', 'two']);
  });
});
