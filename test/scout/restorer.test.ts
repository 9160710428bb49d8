// restoreArchive: a snapshot (tar → zstd → age) restored into a job folder. Archives are made
// with the real `tar`, `zstd` and `age` programs (and once with the Scout's own writeArchive);
// hostile archives are made with GNU tar's -P / --transform, FIFOs and device files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { AgeError } from '../../src/scout/archive/age.ts';
import { writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey, type ScoutKey } from '../../src/scout/archive/x25519.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { walkJob } from '../../src/scout/jobs/walk.ts';
import { restoreArchive, UnsafeEntryError } from '../../src/scout/restore/restorer.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { scratch, tree } from '../helpers/files.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar', 'mkfifo']);

const { work, fresh } = scratch('backupd-restorer-');

const key = generateScoutKey();
const T1 = 1_600_000_000; // whole seconds: tar keeps them exactly
const T2 = 1_500_000_000;

/** The test key as an age identity file, for `age -d -i`. */
function keyFile(): string {
  const path = join(work, 'key.txt');
  if (!existsSync(path)) writeFileSync(path, `${key.ageIdentity}\n`, { mode: 0o600 });
  return path;
}

/** `tar <tarArgs> | zstd | age -r <the test key>`, run in `cwd`. */
const toolArchive = (cwd: string, tarArgs: string[]) => archiveWithTools(cwd, tarArgs, key.ageRecipient);

/** An archive whose tar stream is cut short (but correctly compressed and encrypted). */
function truncatedTar(cwd: string, tarArgs: string[], bytes: number): Buffer {
  return execFileSync(
    'sh',
    [
      '-c',
      'tar --format=posix "$@" -cf - | head -c "$1" | zstd -q -3 | age -r "$0"',
      key.ageRecipient,
      String(bytes),
      ...tarArgs,
    ],
    { cwd, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  );
}

function restore(archive: Buffer, dest: string, extra: { dryRun?: boolean; keys?: ScoutKey[] } = {}) {
  return restoreArchive({
    source: Readable.from([archive]),
    keys: extra.keys ?? [key],
    dest,
    dryRun: extra.dryRun,
  });
}

/** Paths anywhere under `dir` whose name marks a restorer temp file. */
function tempLeftovers(dir: string): string[] {
  return Object.keys(tree(dir, { withTimes: false })).filter((p) => p.includes('.backupd-'));
}

/** A source job folder with files, an empty folder, a nested folder and a symlink. */
function makeSource(): string {
  const src = fresh('src');
  mkdirSync(join(src, 'sub', 'deep'), { recursive: true });
  mkdirSync(join(src, 'empty'));
  writeFileSync(join(src, 'a.txt'), 'alpha from the snapshot');
  writeFileSync(join(src, 'sub', 'b.sh'), '#!/bin/sh\necho bee\n');
  writeFileSync(join(src, 'sub', 'deep', 'c.bin'), Buffer.alloc(70_000, 7));
  symlinkSync('a.txt', join(src, 'link'));
  symlinkSync('../a.txt', join(src, 'sub', 'up-link'));
  chmodSync(join(src, 'a.txt'), 0o640);
  chmodSync(join(src, 'sub', 'b.sh'), 0o755);
  chmodSync(join(src, 'sub', 'deep', 'c.bin'), 0o600);
  chmodSync(join(src, 'empty'), 0o750);
  utimesSync(join(src, 'a.txt'), T1, T1);
  utimesSync(join(src, 'sub', 'b.sh'), T2, T2);
  utimesSync(join(src, 'sub', 'deep', 'c.bin'), T1 + 5, T1 + 5);
  utimesSync(join(src, 'sub', 'deep'), T2 + 1, T2 + 1);
  utimesSync(join(src, 'sub'), T2 + 2, T2 + 2);
  utimesSync(join(src, 'empty'), T2 + 3, T2 + 3);
  return src;
}
const SOURCE_ENTRIES = ['a.txt', 'empty', 'link', 'sub'];

/** An outside folder that must stay empty. */
function outsideDir(): string {
  return mkdtempSync(join(tmpdir(), 'outside-'));
}

describe('restoreArchive', { skip }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  test('replaces matching paths, keeps local-only files, restores empty folders, links, modes and mtimes', async () => {
    const src = makeSource();
    const archive = toolArchive(src, SOURCE_ENTRIES);
    const dest = fresh('dest');
    writeFileSync(join(dest, 'a.txt'), 'old local alpha, longer than the snapshot one');
    writeFileSync(join(dest, 'local-only.txt'), 'mine');
    mkdirSync(join(dest, 'sub'));
    writeFileSync(join(dest, 'sub', 'local.txt'), 'also mine');
    utimesSync(join(dest, 'local-only.txt'), T2, T2);

    const plan = await restore(archive, dest);
    assert.deepEqual([...plan.add].sort(), ['sub/b.sh', 'sub/deep/c.bin']);
    assert.deepEqual(plan.replace, ['a.txt']);
    assert.equal(plan.bytes, 'alpha from the snapshot'.length + '#!/bin/sh\necho bee\n'.length + 70_000);

    const got = tree(dest);
    const want = tree(src);
    for (const [path, node] of Object.entries(want)) {
      assert.deepEqual(got[path], node, `${path} is restored as in the snapshot`);
    }
    assert.equal(readFileSync(join(dest, 'local-only.txt'), 'utf8'), 'mine');
    assert.equal(Math.floor(lstatSync(join(dest, 'local-only.txt')).mtimeMs / 1000), T2);
    assert.equal(readFileSync(join(dest, 'sub', 'local.txt'), 'utf8'), 'also mine');
    assert.ok(lstatSync(join(dest, 'link')).isSymbolicLink(), 'the symlink is a link, not a copy');
    assert.equal(readlinkSync(join(dest, 'sub', 'up-link')), '../a.txt');
    assert.ok(lstatSync(join(dest, 'empty')).isDirectory());
    assert.deepEqual(readdirSync(join(dest, 'empty')), []);
    assert.equal(lstatSync(join(dest, 'empty')).mode & 0o7777, 0o750);
    assert.equal(Math.floor(lstatSync(join(dest, 'empty')).mtimeMs / 1000), T2 + 3);
    assert.equal(Math.floor(lstatSync(join(dest, 'sub', 'deep')).mtimeMs / 1000), T2 + 1);
    assert.equal(lstatSync(join(dest, 'sub', 'b.sh')).mode & 0o7777, 0o755);
    assert.equal(Math.floor(lstatSync(join(dest, 'a.txt')).mtimeMs / 1000), T1);
    assert.deepEqual(tempLeftovers(dest), []);
  });

  test('a file with the same size, mode and time is compared byte for byte: identical ones are left, a late difference is restored whole', async () => {
    const src = fresh('same-src');
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i += 1) big[i] = (i * 7 + (i >> 12)) & 0xff;
    big.fill(0, 1024 * 1024, 1024 * 1024 + 8192); // a run of zeros: a hole in the restored copy
    writeFileSync(join(src, 'big.bin'), big);
    writeFileSync(join(src, 'same.txt'), 'the same');
    for (const name of ['big.bin', 'same.txt']) utimesSync(join(src, name), T1, T1);
    const archive = toolArchive(src, ['big.bin', 'same.txt']);
    const dest = fresh('same-dest');
    assert.deepEqual((await restore(archive, dest)).add.sort(), ['big.bin', 'same.txt']);

    // One byte near the end differs; size, mode and time are put back as they were.
    const edited = Buffer.from(big);
    edited[big.length - 5] = (edited[big.length - 5] as number) ^ 0xff;
    writeFileSync(join(dest, 'big.bin'), edited);
    utimesSync(join(dest, 'big.bin'), T1, T1);
    const same = lstatSync(join(dest, 'same.txt'));
    const plan = await restore(archive, dest);
    assert.deepEqual([plan.add, plan.replace, plan.unchanged], [[], ['big.bin'], ['same.txt']]);
    assert.ok(
      readFileSync(join(dest, 'big.bin')).equals(big),
      "the restored file is the snapshot's, bytes compared before the difference included",
    );
    const after = lstatSync(join(dest, 'same.txt'));
    assert.deepEqual(
      [after.ino, after.ctimeMs],
      [same.ino, same.ctimeMs],
      'the identical file was not rewritten',
    );
    assert.deepEqual(tempLeftovers(dest), []);

    const again = await restore(archive, dest);
    assert.deepEqual([again.replace, again.unchanged.sort()], [[], ['big.bin', 'same.txt']]);
  });

  test("under the Scout's umask 077 entries keep their archived modes and missing folders are made 0755", async () => {
    const src = makeSource();
    // Only the files: the archive holds no entry for their folders.
    const archive = toolArchive(src, ['a.txt', 'sub/b.sh', 'sub/deep/c.bin']);
    const dest = join(fresh('dest'), 'new', 'place');
    const previous = process.umask(0o077);
    try {
      await restore(archive, dest);
    } finally {
      process.umask(previous);
    }
    const mode = (path: string) => lstatSync(join(dest, path)).mode & 0o7777;
    assert.equal(mode('a.txt'), 0o640);
    assert.equal(mode('sub/b.sh'), 0o755);
    assert.equal(mode('sub/deep/c.bin'), 0o600);
    for (const folder of ['..', '.', 'sub', 'sub/deep']) {
      assert.equal(mode(folder), 0o755, `the missing folder ${folder} is made 0755, as under umask 022`);
    }
  });

  test('an existing symlink at a file path is replaced by the file, not written through', async () => {
    const src = fresh('src');
    writeFileSync(join(src, 'data.txt'), 'snapshot data');
    const archive = toolArchive(src, ['data.txt']);
    const outside = outsideDir();
    writeFileSync(join(outside, 'victim.txt'), 'untouched');
    const dest = fresh('dest');
    symlinkSync(join(outside, 'victim.txt'), join(dest, 'data.txt'));
    const plan = await restore(archive, dest);
    assert.deepEqual(plan.replace, ['data.txt']);
    assert.ok(lstatSync(join(dest, 'data.txt')).isFile());
    assert.equal(readFileSync(join(dest, 'data.txt'), 'utf8'), 'snapshot data');
    assert.equal(readFileSync(join(outside, 'victim.txt'), 'utf8'), 'untouched');
    rmSync(outside, { recursive: true, force: true });
  });

  test('an archive made by the Scout (writeArchive) restores identically', async () => {
    const src = makeSource();
    const config: JobConfig = { job_name: 'unit', include_hidden: true, follow_symlinks: false, exclude: [] };
    const entries = [];
    for await (const entry of walkJob(src, config)) entries.push(entry);
    const outPath = join(fresh('out'), 'snap.tar.zst');
    await writeArchive({ jobDir: src, entries, recipient: key.publicKey, outPath });
    const dest = join(fresh('dest'), 'job');
    const plan = await restore(readFileSync(outPath), dest);
    assert.deepEqual([...plan.add].sort(), ['a.txt', 'sub/b.sh', 'sub/deep/c.bin']);
    assert.deepEqual(plan.replace, []);
    assert.deepEqual(tree(dest), tree(src));
  });

  test('mtimes of files, folders and symlinks come back, as tar -x keeps them', async () => {
    const src = makeSource();
    lutimesSync(join(src, 'link'), T2 + 7, T2 + 7);
    lutimesSync(join(src, 'sub', 'up-link'), T1 + 9, T1 + 9);
    const entries = [];
    const config: JobConfig = { job_name: 'unit', include_hidden: true, follow_symlinks: false, exclude: [] };
    for await (const entry of walkJob(src, config)) entries.push(entry);
    const outPath = join(fresh('out'), 'snap.tar.zst');
    await writeArchive({ jobDir: src, entries, recipient: key.publicKey, outPath });
    const times = (dir: string) =>
      Object.fromEntries(
        ['a.txt', 'empty', 'link', 'sub', 'sub/b.sh', 'sub/deep', 'sub/deep/c.bin', 'sub/up-link'].map(
          (p) => [p, lstatSync(join(dir, p)).mtimeMs],
        ),
      );
    const ours = join(fresh('dest'), 'job');
    await restore(readFileSync(outPath), ours);
    assert.deepEqual(times(ours), times(src));
    const theirs = fresh('tar-x');
    execFileSync('sh', [
      '-c',
      'age -d -i "$0" "$1" | zstd -d -q | tar -x -C "$2"',
      keyFile(),
      outPath,
      theirs,
    ]);
    assert.deepEqual(times(theirs), times(src));
  });

  test('dryRun lists what would be added and replaced and writes nothing', async () => {
    const src = makeSource();
    const archive = toolArchive(src, SOURCE_ENTRIES);
    const dest = fresh('dest');
    writeFileSync(join(dest, 'a.txt'), 'old');
    writeFileSync(join(dest, 'local-only.txt'), 'mine');
    const before = tree(dest);
    const plan = await restore(archive, dest, { dryRun: true });
    assert.deepEqual([...plan.add].sort(), ['sub/b.sh', 'sub/deep/c.bin']);
    assert.deepEqual(plan.replace, ['a.txt']);
    assert.ok(plan.bytes > 70_000);
    assert.deepEqual(tree(dest), before, 'the folder is unchanged');

    const missing = join(fresh('dest'), 'not-yet');
    const planned = await restore(archive, missing, { dryRun: true });
    assert.deepEqual([...planned.add].sort(), ['a.txt', 'sub/b.sh', 'sub/deep/c.bin']);
    assert.throws(() => lstatSync(missing), { code: 'ENOENT' }, 'a dry run does not create the folder');
  });

  describe('hostile archives are refused and nothing lands outside', () => {
    async function refuses(archive: Buffer, pattern: RegExp, outside: string, dryRunToo = true) {
      const dest = fresh('dest');
      writeFileSync(join(dest, 'keep.txt'), 'keep');
      await assert.rejects(restore(archive, dest), (error: unknown) => {
        assert.ok(error instanceof UnsafeEntryError, `UnsafeEntryError, got ${String(error)}`);
        assert.match(error.message, pattern);
        return true;
      });
      assert.deepEqual(readdirSync(outside), [], 'the outside folder stays empty');
      assert.equal(readFileSync(join(dest, 'keep.txt'), 'utf8'), 'keep');
      assert.deepEqual(tempLeftovers(dest), []);
      if (dryRunToo) {
        // A dry run refuses the same archive too.
        await assert.rejects(restore(archive, fresh('dry'), { dryRun: true }), UnsafeEntryError);
        assert.deepEqual(readdirSync(outside), []);
      }
      return dest;
    }

    /** An archive of one file `name` stored under the entry name `entry` (tar -P --transform). */
    function renamedEntry(name: string, entry: string): Buffer {
      const stage = fresh('stage');
      writeFileSync(join(stage, name), 'pwned');
      return toolArchive(stage, ['-P', `--transform=s,^${name},${entry},`, name]);
    }

    /** An archive with a symlink `evil` leading to `outside`, then a file `evil/pwned`. */
    function fileUnderLinkTo(outside: string): Buffer {
      const one = fresh('stage');
      const two = fresh('stage');
      symlinkSync(outside, join(one, 'evil'));
      mkdirSync(join(two, 'evil'));
      writeFileSync(join(two, 'evil', 'pwned'), 'pwned');
      return toolArchive(one, ['evil', '-C', two, 'evil/pwned']);
    }

    /** An archive with f.txt and g.txt, a hard link entry to f.txt renamed to an absolute path. */
    function hardLinkToAbsolute(): Buffer {
      const stage = fresh('stage');
      writeFileSync(join(stage, 'f.txt'), 'x');
      execFileSync('ln', [join(stage, 'f.txt'), join(stage, 'g.txt')]);
      return toolArchive(stage, ['-P', '--transform=flags=h;s,^f.txt,/etc/hostname,', 'f.txt', 'g.txt']);
    }

    /** Whether a dry run refuses the archive (it writes nothing either way). */
    async function dryRunRefuses(archive: Buffer): Promise<boolean> {
      const dry = fresh('dry');
      try {
        await restore(archive, dry, { dryRun: true });
        return false;
      } catch (error) {
        assert.ok(error instanceof UnsafeEntryError, String(error));
        return true;
      } finally {
        assert.deepEqual(readdirSync(dry), []);
      }
    }

    test('an absolute path', async () => {
      const outside = outsideDir();
      const archive = renamedEntry('abs.txt', `${outside}/abs.txt`);
      await refuses(archive, /absolute/, outside);
      rmSync(outside, { recursive: true, force: true });
    });

    test('a ../ path', async () => {
      const outside = outsideDir();
      const archive = renamedEntry('up.txt', '../up.txt');
      const dest = await refuses(archive, /\.\./, outside);
      assert.throws(() => lstatSync(join(dest, '..', 'up.txt')), { code: 'ENOENT' });
      rmSync(outside, { recursive: true, force: true });
    });

    test('a ../ path in the middle of the name', async () => {
      const outside = outsideDir();
      const archive = renamedEntry('mid.txt', 'a/../../mid.txt');
      const dest = await refuses(archive, /\.\./, outside);
      assert.throws(() => lstatSync(join(dest, '..', 'mid.txt')), { code: 'ENOENT' });
      rmSync(outside, { recursive: true, force: true });
    });

    test('a symlink leading outside, then a file under it', async () => {
      const outside = outsideDir();
      const archive = fileUnderLinkTo(outside);
      const dest = await refuses(archive, /evil/, outside, false);
      assert.ok(!existsSync(join(dest, 'evil', 'pwned')));
      rmSync(outside, { recursive: true, force: true });
    });

    test('a dry run refuses what the real run refuses (a preview should not promise "add evil/pwned")', async () => {
      const outside = outsideDir();
      const viaLink = fileUnderLinkTo(outside);
      const hardLink = hardLinkToAbsolute();
      assert.equal(await dryRunRefuses(viaLink), true, 'file under a symlink leading out');
      assert.equal(await dryRunRefuses(hardLink), true, 'hard link to an absolute path');
      assert.deepEqual(readdirSync(outside), []);
      rmSync(outside, { recursive: true, force: true });
    });

    test('a hard link to an absolute path', async () => {
      const outside = outsideDir();
      // g.txt becomes a hard link entry to f.txt; its target is renamed to an absolute path.
      const archive = hardLinkToAbsolute();
      await refuses(archive, /absolute/, outside, false);
      rmSync(outside, { recursive: true, force: true });
    });

    test('a symlink already in the folder is not written through', async () => {
      const outside = outsideDir();
      const stage = fresh('stage');
      mkdirSync(join(stage, 'sub'));
      writeFileSync(join(stage, 'sub', 'x.txt'), 'pwned');
      const archive = toolArchive(stage, ['sub/x.txt']);
      const dest = fresh('dest');
      symlinkSync(outside, join(dest, 'sub'));
      await assert.rejects(restore(archive, dest), UnsafeEntryError);
      assert.deepEqual(readdirSync(outside), []);
      assert.deepEqual(tempLeftovers(dest), []);
      rmSync(outside, { recursive: true, force: true });
    });

    /** A special file is not restored: a problem of that entry; the rest of the archive restores. */
    async function skipsSpecial(archive: Buffer, name: string) {
      for (const dryRun of [false, true]) {
        const dest = fresh('dest');
        const plan = await restore(archive, dest, { dryRun });
        assert.equal(plan.problemCount, 1, dryRun ? 'dry run' : 'restore');
        assert.equal(plan.problems[0]?.path, name);
        assert.match(
          plan.problems[0]?.message ?? '',
          /^not restored: devices, FIFOs and other special files/,
        );
        assert.throws(() => lstatSync(join(dest, name)), { code: 'ENOENT' });
        assert.deepEqual(plan.add, ['after.txt']);
        if (!dryRun) assert.equal(readFileSync(join(dest, 'after.txt'), 'utf8'), 'after');
        assert.deepEqual(tempLeftovers(dest), []);
      }
    }

    test('a FIFO is a problem of its entry; the entries after it restore', async () => {
      const stage = fresh('stage');
      execFileSync('mkfifo', [join(stage, 'pipe')]);
      writeFileSync(join(stage, 'after.txt'), 'after');
      await skipsSpecial(toolArchive(stage, ['pipe', 'after.txt']), 'pipe');
    });

    test('a character device is a problem of its entry; the entries after it restore', async () => {
      const stage = fresh('stage');
      writeFileSync(join(stage, 'after.txt'), 'after');
      const archive = toolArchive('/', [
        '-P',
        '--transform=s,^/dev/null,null,',
        '/dev/null',
        '-C',
        stage,
        'after.txt',
      ]);
      await skipsSpecial(archive, 'null');
    });
  });

  test('a wrong key fails with an AgeError and writes nothing', async () => {
    const src = makeSource();
    const archive = toolArchive(src, SOURCE_ENTRIES);
    const dest = fresh('dest');
    writeFileSync(join(dest, 'a.txt'), 'old');
    await assert.rejects(restore(archive, dest, { keys: [generateScoutKey()] }), AgeError);
    assert.deepEqual(readdirSync(dest), ['a.txt']);
    assert.equal(readFileSync(join(dest, 'a.txt'), 'utf8'), 'old');
    // With the right key among several, it opens.
    const plan = await restore(archive, dest, { keys: [generateScoutKey(), key] });
    assert.deepEqual(plan.replace, ['a.txt']);
  });

  test('a truncated encrypted archive fails and leaves no temp files', async () => {
    const src = fresh('src');
    writeFileSync(
      join(src, 'big.bin'),
      Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251)),
    );
    writeFileSync(join(src, 'z.txt'), 'after');
    const archive = toolArchive(src, ['big.bin', 'z.txt']);
    const dest = fresh('dest');
    await assert.rejects(restore(archive.subarray(0, Math.floor(archive.length / 2)), dest), Error);
    assert.deepEqual(tempLeftovers(dest), []);
    assert.throws(() => lstatSync(join(dest, 'z.txt')), { code: 'ENOENT' });
  });

  test('a truncated tar stream fails and leaves no temp files', async () => {
    const src = fresh('src');
    writeFileSync(join(src, 'big.bin'), Buffer.alloc(200_000, 1));
    writeFileSync(join(src, 'z.txt'), 'after');
    const archive = truncatedTar(src, ['big.bin', 'z.txt'], 100_000);
    const dest = fresh('dest');
    writeFileSync(join(dest, 'big.bin'), 'old big');
    await assert.rejects(restore(archive, dest), /truncated/);
    assert.deepEqual(tempLeftovers(dest), []);
    assert.equal(readFileSync(join(dest, 'big.bin'), 'utf8'), 'old big', 'the old file stays whole');
    assert.throws(() => lstatSync(join(dest, 'z.txt')), { code: 'ENOENT' });
  });
});
