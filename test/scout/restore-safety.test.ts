// Restore safety (issue #13 items 5 and 6): a folder renamed or swapped for a symlink while a
// restore runs never redirects a write or a mode change outside the job folder; a restore
// destination that is a symlink is refused; owners are recorded in the archive and restored
// by root before the mode (setuid/setgid bits survive only that way), and a failure to set
// one entry's metadata is a warning, not the end of the job. Archives come from the real
// `tar` (and the Scout's own writer), restores run as root like the Scout on a NAS.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { AppError } from '../../src/core/errors.ts';
import { writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { walkJob } from '../../src/scout/jobs/walk.ts';
import { restoreFailure } from '../../src/scout/restore/restore-service.ts';
import { type RestoreOptions, restoreArchive, UnsafeEntryError } from '../../src/scout/restore/restorer.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { scratch } from '../helpers/files.ts';
import { IN_CI, skipUnlessPrograms } from '../helpers/programs.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const skip =
  skipUnlessPrograms(['age', 'zstd', 'tar', 'setpriv']) ||
  (!isRoot && !IN_CI ? 'restoring owners needs root (the tests chown files)' : false);

const { work, fresh } = scratch('backupd-restore-safety-');
chmodSync(work, 0o755); // the non-root restore below runs as nobody

const key = generateScoutKey();
const T = 1_600_000_000;

/** `tar --format=posix --sort=name <args> | zstd | age`: entries in a known order. */
const toolArchive = (cwd: string, args: string[]) =>
  archiveWithTools(cwd, ['--sort=name', ...args], key.ageRecipient);

function restore(archive: Buffer, dest: string, extra: Partial<RestoreOptions> = {}) {
  return restoreArchive({ source: Readable.from([archive]), keys: [key], dest, ...extra });
}

/** A folder outside every job folder, mode 0755 and an old mtime, that must stay as it is. */
function outsideDir(): { path: string; unchanged: () => void } {
  const path = fresh('outside');
  chmodSync(path, 0o755);
  utimesSync(path, T, T);
  return {
    path,
    unchanged() {
      const s = statSync(path);
      assert.deepEqual(readdirSync(path), [], 'nothing lands in the outside folder');
      assert.equal(s.mode & 0o7777, 0o755, "the outside folder's mode is untouched");
      assert.equal(Math.floor(s.mtimeMs / 1000), T, "the outside folder's time is untouched");
    },
  };
}

/** A job source with folder a (mode 0777) holding one.txt, two.txt and z.txt, in that order. */
function sourceWithFolder(): string {
  const src = fresh('src');
  mkdirSync(join(src, 'a', 'b'), { recursive: true });
  for (const name of ['a/b/one.txt', 'a/b/two.txt', 'a/z.txt']) writeFileSync(join(src, name), name);
  chmodSync(join(src, 'a'), 0o777);
  return src;
}

/** The tar listing (`tar -tvf --numeric-owner`) of a Scout archive, decrypted with the real age. */
function listing(archivePath: string): string {
  const identity = join(fresh('key'), 'identity.txt');
  writeFileSync(identity, `${key.ageIdentity}\n`, { mode: 0o600 });
  return execFileSync(
    'sh',
    ['-c', 'age -d -i "$0" "$1" | zstd -d -q -c | tar -tvf - --numeric-owner', identity, archivePath],
    { encoding: 'utf8' },
  );
}

describe('restore safety', { skip }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  describe('a folder swapped for a symlink mid-restore', () => {
    /**
     * A destination that holds the archive's folders already (a job folder restored over): each
     * entry's folder is checked before it is written, and a swap stops the restore there.
     */
    function existingTree(): string {
      const dest = fresh('dest');
      mkdirSync(join(dest, 'a', 'b'), { recursive: true });
      return dest;
    }

    /** After the first file (a/b/one.txt): a local user renames dest/a and puts a link to `target` in its place. */
    function swapForLink(dest: string, target: string): () => void {
      let swapped = false;
      return () => {
        if (swapped) return;
        swapped = true;
        renameSync(join(dest, 'a'), join(dest, 'a-moved'));
        symlinkSync(target, join(dest, 'a'));
      };
    }

    test('stops the restore at the next entry: nothing is written through the link', async () => {
      const archive = toolArchive(sourceWithFolder(), ['a']);
      const outside = outsideDir();
      const dest = existingTree();
      await assert.rejects(
        restore(archive, dest, { onProgress: swapForLink(dest, outside.path) }),
        (error: unknown) => {
          assert.ok(error instanceof UnsafeEntryError, String(error));
          assert.match(error.message, /"a\/b" was moved or replaced .*restore stopped/);
          return true;
        },
      );
      outside.unchanged();
      assert.deepEqual(readdirSync(join(dest, 'a-moved', 'b')), ['one.txt']);
    });

    test('a folder higher up swapped for a link to a look-alike tree is caught too', async () => {
      const archive = toolArchive(sourceWithFolder(), ['a']);
      const outside = outsideDir();
      const lookAlike = join(fresh('look-alike'), 'a');
      mkdirSync(join(lookAlike, 'b'), { recursive: true });
      const dest = existingTree();
      await assert.rejects(
        restore(archive, dest, { onProgress: swapForLink(dest, lookAlike) }),
        /"a\/b" was moved or replaced/,
      );
      assert.deepEqual(readdirSync(join(lookAlike, 'b')), [], 'a/b/two.txt did not land in the look-alike');
      assert.equal(statSync(lookAlike).mode & 0o777, 0o755, 'the look-alike kept its mode');
      outside.unchanged();
    });

    test('in folders the restore made itself, nothing is written through the link and nothing outside changes', async () => {
      // Made by this restore (0700 until its entries are in): its files are created in place
      // through the open folder, several at once on the writing threads (file-batches.ts), so a
      // swap after the first may come once the others are written; they land in the folder made.
      const archive = toolArchive(sourceWithFolder(), ['a']);
      const outside = outsideDir();
      const lookAlike = join(fresh('look-alike'), 'a');
      mkdirSync(join(lookAlike, 'b'), { recursive: true });
      for (const target of [outside.path, lookAlike]) {
        const dest = fresh('dest');
        await restore(archive, dest, { onProgress: swapForLink(dest, target) }).catch((error: unknown) => {
          assert.ok(error instanceof UnsafeEntryError, String(error));
        });
        const landed = [...readdirSync(join(dest, 'a-moved', 'b')), ...readdirSync(join(dest, 'a-moved'))];
        assert.ok(landed.includes('one.txt'), landed.join(' '));
      }
      outside.unchanged();
      assert.deepEqual(readdirSync(join(lookAlike, 'b')), [], 'nothing landed in the look-alike');
      assert.equal(statSync(lookAlike).mode & 0o777, 0o755, 'the look-alike kept its mode');
    });

    test("after the last file: the folder's mode and time are not applied through the link (a problem)", async () => {
      const archive = toolArchive(sourceWithFolder(), ['a']);
      const outside = outsideDir();
      const dest = fresh('dest');
      const warned: string[] = [];
      let files = 0;
      const plan = await restore(archive, dest, {
        onProblem: ({ path }) => warned.push(path),
        onProgress: () => {
          files += 1;
          if (files !== 3) return; // a/z.txt, the last entry: only folder modes and times remain
          renameSync(join(dest, 'a'), join(dest, 'a-moved'));
          symlinkSync(outside.path, join(dest, 'a'));
        },
      });
      outside.unchanged(); // the archive's folder a is 0777: a chmod by path would have landed here
      assert.deepEqual(warned, ['a/b', 'a'], 'a and the folder below it are no longer in place');
      assert.equal(plan.problems.length, 2);
      assert.equal(plan.problemCount, 2);
      assert.equal(plan.problems[1]?.path, 'a');
      assert.match(
        plan.problems[1]?.message ?? '',
        /^the folder was moved or replaced \(perhaps by a symlink\) while restoring; its owner, mode and time are left as they are$/,
      );
      assert.equal(readFileSync(join(dest, 'a-moved', 'z.txt'), 'utf8'), 'a/z.txt');
    });
  });

  describe('the restore destination', () => {
    test('a symlink is refused (restore and preview), whatever it points to', async () => {
      const src = fresh('src');
      writeFileSync(join(src, 'f.txt'), 'f');
      const archive = toolArchive(src, ['f.txt']);
      const outside = outsideDir();
      const scanRoot = fresh('scan');
      const dest = join(scanRoot, 'docs');
      symlinkSync(outside.path, dest);
      for (const dryRun of [false, true]) {
        const error = await restore(archive, dest, { dryRun }).then(
          () => assert.fail('the restore went through the link'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof UnsafeEntryError, String(error));
        assert.match(error.message, /restore destination .*docs is a symbolic link/);
        const answer = restoreFailure(error);
        assert.ok(answer instanceof AppError);
        assert.equal(answer.status, 409);
        assert.match(answer.message, /restore refused: .*symbolic link.*replace the link with a real folder/);
      }
      outside.unchanged();
      assert.ok(lstatSync(dest).isSymbolicLink(), 'the link itself is left alone');
    });

    test('with the scan root given (a job restore), a folder on the way that is a symlink is refused too', async () => {
      const src = fresh('src');
      writeFileSync(join(src, 'f.txt'), 'f');
      const archive = toolArchive(src, ['f.txt']);
      const outside = outsideDir();
      mkdirSync(join(outside.path, 'docs'));
      chmodSync(join(outside.path, 'docs'), 0o755);
      const scanRoot = fresh('scan');
      symlinkSync(outside.path, join(scanRoot, 'team'));
      const dest = join(scanRoot, 'team', 'docs');
      for (const dryRun of [false, true]) {
        await assert.rejects(restore(archive, dest, { within: scanRoot, dryRun }), (error: unknown) => {
          assert.ok(error instanceof UnsafeEntryError, String(error));
          assert.match(error.message, /team\/docs passes through .*team, which is a symbolic link/);
          return true;
        });
      }
      assert.deepEqual(readdirSync(join(outside.path, 'docs')), []);
      // Missing folders on the way are made as real folders.
      const plan = await restore(archive, join(scanRoot, 'new', 'docs'), { within: scanRoot });
      assert.deepEqual(plan.add, ['f.txt']);
      assert.ok(lstatSync(join(scanRoot, 'new')).isDirectory());
      await assert.rejects(restore(archive, outside.path, { within: scanRoot }), /is not inside/);
    });

    test('a file is refused; a missing folder is made', async () => {
      const src = fresh('src');
      writeFileSync(join(src, 'f.txt'), 'f');
      const archive = toolArchive(src, ['f.txt']);
      const scanRoot = fresh('scan');
      writeFileSync(join(scanRoot, 'docs'), 'a file');
      await assert.rejects(restore(archive, join(scanRoot, 'docs')), /docs is not a folder/);
      const plan = await restore(archive, join(scanRoot, 'new', 'docs'));
      assert.deepEqual(plan.add, ['f.txt']);
      assert.equal(readFileSync(join(scanRoot, 'new', 'docs', 'f.txt'), 'utf8'), 'f');
    });
  });

  describe('owners and setuid/setgid', () => {
    /** f (1234:1234, 4755), tool (0:0, 2755), d/ (1234:5678, 2775) with g, link (1234:1234). */
    function ownedSource(): string {
      const src = fresh('src');
      mkdirSync(join(src, 'd'));
      writeFileSync(join(src, 'f'), '#!/bin/sh\n');
      writeFileSync(join(src, 'tool'), '#!/bin/sh\n');
      writeFileSync(join(src, 'd', 'g'), 'g');
      symlinkSync('f', join(src, 'link'));
      chownSync(join(src, 'f'), 1234, 1234);
      chownSync(join(src, 'd'), 1234, 5678);
      lchownSync(join(src, 'link'), 1234, 1234);
      chmodSync(join(src, 'f'), 0o4755);
      chmodSync(join(src, 'tool'), 0o2755);
      chmodSync(join(src, 'd'), 0o2775);
      return src;
    }

    const owner = (path: string) => {
      const s = lstatSync(path);
      return { uid: s.uid, gid: s.gid, mode: s.isSymbolicLink() ? null : s.mode & 0o7777 };
    };

    async function scoutArchive(src: string): Promise<string> {
      const config: JobConfig = {
        job_name: 'owners',
        include_hidden: true,
        follow_symlinks: false,
        exclude: [],
      };
      const entries = [];
      for await (const entry of walkJob(src, config)) entries.push(entry);
      const outPath = join(fresh('out'), 'snap.tar.zst');
      await writeArchive({ jobDir: src, entries, recipient: key.publicKey, outPath });
      return outPath;
    }

    test('the Scout records owners; GNU tar lists them; a root restore brings owner, then mode, back', async () => {
      const src = ownedSource();
      const outPath = await scoutArchive(src);
      const listed = listing(outPath);
      assert.match(listed, /^-rwsr-xr-x 1234\/1234 .* f$/m);
      assert.match(listed, /^drwxrwsr-x 1234\/5678 .* d\/$/m);
      assert.match(listed, /^lrwxrwxrwx 1234\/1234 .* link -> f$/m);

      for (const archive of [readFileSync(outPath), toolArchive(src, ['f', 'tool', 'd', 'link'])]) {
        const dest = fresh('dest');
        const plan = await restore(archive, dest, { asRoot: true });
        assert.deepEqual(plan.problems, []);
        assert.deepEqual(owner(join(dest, 'f')), { uid: 1234, gid: 1234, mode: 0o4755 });
        assert.deepEqual(owner(join(dest, 'tool')), { uid: 0, gid: 0, mode: 0o2755 });
        assert.deepEqual(owner(join(dest, 'd')), { uid: 1234, gid: 5678, mode: 0o2775 });
        assert.deepEqual(owner(join(dest, 'link')), { uid: 1234, gid: 1234, mode: null });
      }
    });

    test('owners beyond the octal header field go in pax records, which GNU tar and the restore read', async () => {
      const src = fresh('src');
      writeFileSync(join(src, 'big-owner'), 'x');
      chownSync(join(src, 'big-owner'), 3_000_000, 4_000_000);
      const outPath = await scoutArchive(src);
      assert.match(listing(outPath), /^-rw-r--r-- 3000000\/4000000 .* big-owner$/m);
      const dest = fresh('dest');
      await restore(readFileSync(outPath), dest, { asRoot: true });
      assert.deepEqual(owner(join(dest, 'big-owner')), { uid: 3_000_000, gid: 4_000_000, mode: 0o644 });
    });

    test('not as root: setuid/setgid bits of files are dropped, owners left to the restoring user', async () => {
      const archive = toolArchive(ownedSource(), ['f', 'tool', 'd', 'link']);
      const dest = fresh('dest');
      const plan = await restore(archive, dest, { asRoot: false });
      assert.deepEqual(plan.problems, []);
      const me = { uid: process.getuid?.(), gid: process.getgid?.() };
      assert.deepEqual(owner(join(dest, 'f')), { ...me, mode: 0o755 });
      assert.deepEqual(owner(join(dest, 'tool')), { ...me, mode: 0o755 });
      assert.equal(owner(join(dest, 'd', 'g')).uid, me.uid);
    });

    test('a real non-root restore (setpriv to nobody) drops setuid/setgid by default', async () => {
      const archivePath = join(fresh('archive'), 'snap.tar.zst.age');
      writeFileSync(archivePath, toolArchive(ownedSource(), ['f', 'tool', 'd']));
      const dest = fresh('dest');
      chownSync(dest, NOBODY, NOBODY);
      const script = join(fresh('script'), 'restore.ts');
      writeFileSync(
        script,
        [
          `import { createReadStream } from 'node:fs';`,
          `import { parseScoutKey } from ${JSON.stringify(join(ROOT, 'src/scout/archive/x25519.ts'))};`,
          `import { restoreArchive } from ${JSON.stringify(join(ROOT, 'src/scout/restore/restorer.ts'))};`,
          `const [archive, dest, identity] = process.argv.slice(2);`,
          `const plan = await restoreArchive({ source: createReadStream(archive), keys: [parseScoutKey(identity)], dest });`,
          `process.stdout.write(JSON.stringify(plan));`,
        ].join('\n'),
      );
      chmodSync(archivePath, 0o644);
      chmodSync(script, 0o644);
      const out = execFileSync(
        'setpriv',
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          process.execPath,
          script,
          archivePath,
          dest,
          key.ageIdentity,
        ],
        { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } },
      );
      assert.deepEqual(JSON.parse(out).add.sort(), ['d/g', 'f', 'tool']);
      assert.deepEqual(owner(join(dest, 'f')), { uid: NOBODY, gid: NOBODY, mode: 0o755 });
      assert.deepEqual(owner(join(dest, 'tool')), { uid: NOBODY, gid: NOBODY, mode: 0o755 });
    });

    test('a file over 1 MiB streams into the descriptor it was created with: content, owner, mode, time', async () => {
      const src = fresh('src');
      const big = Buffer.alloc(1024 * 1024 + 4099);
      for (let i = 0; i < big.length; i += 1) big[i] = (i * 31) % 251;
      writeFileSync(join(src, 'big.bin'), big);
      chownSync(join(src, 'big.bin'), 1234, 1234);
      chmodSync(join(src, 'big.bin'), 0o4750);
      utimesSync(join(src, 'big.bin'), T, T);
      const dest = fresh('dest');
      const plan = await restore(toolArchive(src, ['big.bin']), dest, { asRoot: true });
      assert.deepEqual(plan.add, ['big.bin']);
      assert.ok(readFileSync(join(dest, 'big.bin')).equals(big));
      assert.deepEqual(owner(join(dest, 'big.bin')), { uid: 1234, gid: 1234, mode: 0o4750 });
      assert.equal(Math.floor(statSync(join(dest, 'big.bin')).mtimeMs / 1000), T);
      assert.deepEqual(readdirSync(dest), ['big.bin'], 'no temporary file left');
    });

    test('an owner that cannot be set is a problem: that file loses setuid, the rest of the job restores', async () => {
      // uid 4294967295 is (uid_t)-1, which chown reads as "leave the owner as is".
      const src = ownedSource();
      const archive = toolArchive(src, ['--pax-option=uid:=4294967295', 'f', 'tool', 'd']);
      const dest = fresh('dest');
      const warned: string[] = [];
      const plan = await restore(archive, dest, { asRoot: true, onProblem: ({ path }) => warned.push(path) });
      assert.deepEqual(warned.sort(), ['d', 'd/g', 'f', 'tool']);
      assert.match(
        plan.problems.find((p) => p.path === 'f')?.message ?? '',
        /^cannot set the owner to 4294967295:1234 \(not a valid uid\/gid\); restored without its setuid\/setgid bits$/,
      );
      assert.deepEqual(owner(join(dest, 'f')), { uid: 0, gid: 0, mode: 0o755 });
      assert.equal(owner(join(dest, 'tool')).mode, 0o755);
      assert.equal(owner(join(dest, 'd')).mode, 0o2775, 'a folder keeps its mode');
      assert.equal(readFileSync(join(dest, 'd', 'g'), 'utf8'), 'g');
      assert.deepEqual(plan.add.sort(), ['d/g', 'f', 'tool']);
      assert.ok(!existsSync(join(dest, 'link')));
    });
  });
});
