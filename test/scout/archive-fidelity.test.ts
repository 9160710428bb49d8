// Every file comes back (issue #24, backup side): a tree with the entries real hosts have is
// walked and archived by the Scout's pipeline (walkJob → writeArchive) and extracted by the
// real `age -d | zstd -d | tar --xattrs --xattrs-include='*' -x` (and bsdtar), byte for byte.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  createReadStream,
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type ArchiveResult, writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { scanXattrs } from '../../src/scout/archive/xattr-scan.ts';
import { readSnapshot } from '../../src/scout/drill/read-snapshot.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { jobFingerprint, type SkippedEntry, type WalkEntry, walkJob } from '../../src/scout/jobs/walk.ts';
import { WalkFingerprints } from '../../src/scout/jobs/walk-fingerprints.ts';
import { escapeName } from '../../src/shared/byte-names.ts';
import { byteTree } from '../helpers/byte-tree.ts';
import { IN_CI, skipUnlessPrograms } from '../helpers/programs.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-fidelity-'));
after(() => rmSync(work, { recursive: true, force: true }));
const key = generateScoutKey();
const keyFile = join(work, 'key.txt');
writeFileSync(keyFile, `${key.ageIdentity}\n`);
const CONFIG: JobConfig = { job_name: 'fidelity', include_hidden: true, follow_symlinks: false, exclude: [] };

/** A path under `root` with raw bytes in it: `at(root, 'caf', [0xe9], '.txt')`. */
const at = (root: string, ...parts: Array<string | number[]>) =>
  Buffer.concat([
    Buffer.from(`${root}/`),
    ...parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))),
  ]);

async function walk(dir: string, config: Partial<JobConfig> = {}, filesExaminedByOpener = false) {
  const entries: WalkEntry[] = [];
  const skipped: SkippedEntry[] = [];
  const options = { onSkip: (s: SkippedEntry) => skipped.push(s), filesExaminedByOpener };
  for await (const entry of walkJob(dir, { ...CONFIG, ...config }, options)) entries.push(entry);
  return { entries, skipped };
}

async function archive(dir: string, name: string): Promise<{ file: string; result: ArchiveResult }> {
  const { entries } = await walk(dir);
  const file = join(work, `${name}.tar.zst.age`);
  const result = await writeArchive({ jobDir: dir, entries, recipient: key.publicKey, outPath: file });
  return { file, result };
}

/** The real programs: `age -d | zstd -d | <tar> -x` into a new folder. */
function extract(file: string, name: string, tar = "tar --xattrs --xattrs-include='*'"): string {
  const dest = join(work, name);
  mkdirSync(dest);
  execFileSync(
    'sh',
    ['-c', `age -d -i "$0" "$1" | zstd -d -q | ${tar} -x -f - -C "$2"`, keyFile, file, dest],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return dest;
}

/** A tree of names that are not text: Latin-1, a 255-byte name, a backslash, a non-UTF-8 folder and link target. */
function oddNames(root: string): string {
  mkdirSync(root);
  writeFileSync(at(root, 'latin1-caf', [0xe9], '.txt'), 'Latin-1\n');
  writeFileSync(at(root, 'N'.repeat(251), '.dat'), 'long\n');
  writeFileSync(at(root, 'back\\slash'), 'b\n');
  writeFileSync(at(root, 'nfc-caf\u00e9'), 'nfc\n');
  mkdirSync(at(root, 'dir-', [0xff, 0xfe]));
  writeFileSync(at(root, 'dir-', [0xff, 0xfe], '/inner-', [0x80], '.bin'), Buffer.from([0, 1, 2]));
  symlinkSync(at('.', 'latin1-caf', [0xe9], '.txt').subarray(2), at(root, 'link-', [0xe9]));
  const deep = `${'d'.repeat(200)}/${'e'.repeat(200)}`;
  mkdirSync(join(root, deep), { recursive: true });
  writeFileSync(at(root, deep, '/', [0xe0, 0x80], 'x'), 'deep\n');
  return root;
}

describe('names are bytes', { skip: skipUnlessPrograms(['age', 'zstd', 'tar']) }, () => {
  const src = oddNames(join(work, 'names'));

  test('every name comes back byte for byte through age | zstd | tar -x', async () => {
    const { file, result } = await archive(src, 'names');
    assert.deepEqual(result.skipped, []);
    const dest = extract(file, 'names-gnu');
    const want = byteTree(src);
    assert.ok('latin1-caf\\xe9.txt' in want && 'dir-\\xff\\xfe/inner-\\x80.bin' in want);
    assert.equal(want['link-\\xe9']?.target, 'latin1-caf\\xe9.txt');
    assert.deepEqual(byteTree(dest), want);
    // A restore drill reads the same fingerprint back (names as bytes on both sides).
    const read = await readSnapshot({ source: createReadStream(file), keys: [key] });
    assert.equal(read.fingerprint, jobFingerprint((await walk(src)).entries));
  });

  test('bsdtar reads the same names (hdrcharset=BINARY)', {
    skip: skipUnlessPrograms(['bsdtar']),
  }, async () => {
    const { file } = await archive(src, 'names-bsd');
    assert.deepEqual(byteTree(extract(file, 'names-bsd-out', 'bsdtar')), byteTree(src));
  });

  test('the fingerprint changes when a file with a non-UTF-8 name changes', async () => {
    const dir = oddNames(join(work, 'names-fp'));
    const first = jobFingerprint((await walk(dir)).entries);
    assert.equal(jobFingerprint((await walk(dir)).entries), first);
    writeFileSync(at(dir, 'dir-', [0xff, 0xfe], '/inner-', [0x80], '.bin'), Buffer.from([0, 1, 2, 3]));
    assert.notEqual(jobFingerprint((await walk(dir)).entries), first);
  });

  test('an exclusion written with \\xHH matches the bytes', async () => {
    const { entries } = await walk(src, { exclude: ['latin1-caf\\xe9.txt', 'dir-\\xff\\xfe/'] });
    const names = entries.map((entry) => escapeName(entry.path));
    assert.ok(!names.includes('latin1-caf\\xe9.txt'));
    assert.ok(!names.some((name) => name.startsWith('dir-')));
    assert.ok(names.includes('back\\\\slash') && names.includes('link-\\xe9'));
  });
});

describe('hard links', { skip: skipUnlessPrograms(['age', 'zstd', 'tar']) }, () => {
  test('names of one file are link entries to the first: tar -x gives back one inode; a drill reads the same fingerprint', async () => {
    const dir = join(work, 'links');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'a-first.txt'), 'shared content\n');
    linkSync(join(dir, 'a-first.txt'), join(dir, 'sub', 'second.txt'));
    linkSync(join(dir, 'a-first.txt'), join(dir, 'third-\u00e9'));
    writeFileSync(join(dir, 'single.txt'), 'alone\n');
    const { entries } = await walk(dir);
    const file = join(work, 'links.tar.zst.age');
    const result = await writeArchive({ jobDir: dir, entries, recipient: key.publicKey, outPath: file });
    assert.deepEqual(result.skipped, []);
    const { tar } = readBack(file);
    const verbose = execFileSync('tar', ['-tv'], { input: tar }).toString();
    assert.match(verbose, /^hrw.* sub\/second\.txt link to a-first\.txt$/m);
    const back = byteTree(extract(file, 'links-out'));
    assert.equal(back['sub/second.txt']?.linkOf, 'a-first.txt');
    assert.equal(back['third-\u00e9']?.linkOf, 'a-first.txt');
    assert.equal(back['single.txt']?.linkOf, undefined);
    assert.deepEqual(back, byteTree(dir));
    const read = await readSnapshot({ source: createReadStream(file), keys: [key] });
    assert.equal(read.fingerprint, jobFingerprint(entries));
    assert.equal(read.files, 4);
  });
});

/** `getfattr -d` (every attribute but SELinux labels), `getfacl` and `getcap` of a tree, names relative. */
function attributes(dir: string): string {
  const run = (script: string) =>
    execFileSync('sh', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  return [
    run("getfattr -R -h -d -m '^(user|trusted|system|security\\.capability)' -e hex . || true"),
    run('getfacl -R -p -n . || true'),
    run('getcap -r . || true'),
  ].join('\n');
}

describe('extended attributes and ACLs', {
  skip: skipUnlessPrograms(['age', 'zstd', 'tar', 'getfattr', 'setfacl', 'setcap']),
}, () => {
  const dir = join(work, 'xattrs');
  mkdirSync(join(dir, 'shared'), { recursive: true });
  writeFileSync(join(dir, 'plain.txt'), 'no attributes');
  writeFileSync(join(dir, 'tagged.txt'), 'user.x');
  writeFileSync(at(dir, 'odd-', [0xe9], '\\name'), 'odd name with an attribute');
  writeFileSync(join(dir, 'ping'), 'a binary with a capability', { mode: 0o755 });
  execFileSync('setfattr', ['-n', 'user.x', '-v', 'hello', join(dir, 'tagged.txt')]);
  execFileSync('setfattr', ['-n', 'user.bin', '-v', '0x00ff0a3d', join(dir, 'tagged.txt')]);
  // argv from Node is UTF-8: the odd name's bytes come from printf.
  execFileSync('sh', ['-c', 'setfattr -n user.y -v odd "$(printf \'odd-\\351\\134name\')"'], { cwd: dir });
  execFileSync('setfacl', ['-m', 'u:65534:r,g:65534:rw', join(dir, 'tagged.txt')]);
  execFileSync('setfacl', ['-d', '-m', 'u:65534:rx', join(dir, 'shared')]);
  execFileSync('setcap', ['cap_net_raw+ep', join(dir, 'ping')]);

  test('user.*, ACLs and security.capability come back with tar --xattrs --xattrs-include=* -x, and with --acls', async () => {
    const { entries } = await walk(dir);
    const xattrs = await scanXattrs(dir);
    assert.deepEqual([...xattrs.keys()].sort(), ['odd-\xe9\\name', 'ping', 'shared', 'tagged.txt']);
    const file = join(work, 'xattrs.tar.zst.age');
    await writeArchive({ jobDir: dir, entries, xattrs, recipient: key.publicKey, outPath: file });
    const want = attributes(dir);
    assert.match(want, /user\.x=0x68656c6c6f/);
    assert.match(want, /user:65534:r--/);
    assert.match(want, /default:user:65534:r-x/);
    assert.match(want, /ping cap_net_raw=ep/);
    assert.equal(attributes(extract(file, 'xattrs-gnu')), want);
    assert.equal(attributes(extract(file, 'xattrs-acls', "tar --xattrs --xattrs-include='*' --acls")), want);
    assert.deepEqual(byteTree(extract(file, 'xattrs-tree')), byteTree(dir));
  });

  test('no getfattr: an empty map and one warning, not a failure', async () => {
    const warnings: string[] = [];
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      assert.equal((await scanXattrs(dir, { onWarning: (m) => warnings.push(m) })).size, 0);
    } finally {
      process.env.PATH = saved;
    }
    assert.deepEqual(warnings, [
      'getfattr is not installed (Debian package "attr"): extended attributes, ACLs and file capabilities are not in this snapshot',
    ]);
  });
});

const asRoot = process.getuid?.() === 0 || IN_CI ? false : 'runs a child process as nobody: needs root';

/** A folder with a file and a folder that only root may read, beside an open file; `work` opened to all. */
function unreadableTree(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { mode: 0o755 });
  writeFileSync(join(dir, 'open.txt'), 'open', { mode: 0o644 });
  writeFileSync(join(dir, 'closed.txt'), 'closed', { mode: 0o600 });
  mkdirSync(join(dir, 'locked'), { mode: 0o700 });
  writeFileSync(join(dir, 'locked', 'inside.txt'), 'inside');
  execFileSync('chmod', ['755', work]);
  return dir;
}

/** The URL of a module under src/scout, for a script run in a child process. */
const moduleUrl = (path: string) => JSON.stringify(new URL(`../../src/scout/${path}`, import.meta.url).href);

/** Runs an ES module script as nobody; answers the JSON it writes. */
function asNobody(script: string): unknown {
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      uid: 65534,
      gid: 65534,
      env: { LOG_LEVEL: 'silent' },
    }).toString(),
  );
}

/** Archives `entries` of `dir`: what was left out (path, reason, in the archive) and the tar read back. */
async function archiveOf(dir: string, entries: WalkEntry[], name: string) {
  const file = join(work, `${name}.tar.zst.age`);
  const result = await writeArchive({ jobDir: dir, entries, recipient: key.publicKey, outPath: file });
  return {
    skipped: result.skipped.map((s) => [s.path.toString(), s.reason, s.inArchive]),
    ...readBack(file),
  };
}

/** The tar listing of an archive (`tar -t`), and whether its bytes contain `needle`. */
function readBack(file: string): { names: string[]; tar: Buffer } {
  const tar = execFileSync('sh', ['-c', 'age -d -i "$0" "$1" | zstd -d -q', keyFile, file], {
    maxBuffer: 256 * 1024 * 1024,
  });
  const names = execFileSync('tar', ['-t'], { input: tar }).toString().split('\n').filter(Boolean);
  return { names, tar };
}

describe('what cannot be archived is left out and reported', {
  skip: skipUnlessPrograms(['age', 'zstd', 'tar']),
}, () => {
  test('FIFOs, sockets and devices are counted, not archived and not an error', async () => {
    const dir = join(work, 'specials');
    mkdirSync(dir);
    writeFileSync(join(dir, 'plain.txt'), 'plain');
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    execFileSync('python3', [
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(dir, 'sock'))})`,
    ]);
    const { entries, skipped } = await walk(dir);
    assert.deepEqual(
      entries.map((e) => e.path.toString()),
      ['plain.txt'],
    );
    assert.deepEqual(
      skipped.map((s) => [s.path.toString(), s.reason]),
      [
        ['fifo', 'a FIFO, not archived'],
        ['sock', 'a socket, not archived'],
      ],
    );
  });

  test('a file swapped for a symlink between the scan and the read is left out, not read through the link (issue #23 item 9)', async () => {
    const dir = join(work, 'swap');
    mkdirSync(dir);
    const secret = join(work, 'root-only.txt');
    writeFileSync(secret, 'ROOT-ONLY-SECRET', { mode: 0o600 });
    writeFileSync(join(dir, 'a-harmless.txt'), 'harmless');
    writeFileSync(join(dir, 'b-replaced.txt'), 'first');
    writeFileSync(join(dir, 'c-other.txt'), 'OTHER-FILE-BYTES');
    writeFileSync(join(dir, 'd-fifo.txt'), 'becomes a FIFO');
    const { entries } = await walk(dir);
    // Between the scan and the read: a link to a root-only file, another file renamed over
    // one, a FIFO in place of a file (opening it must not wait for a writer).
    rmSync(join(dir, 'a-harmless.txt'));
    symlinkSync(secret, join(dir, 'a-harmless.txt'));
    writeFileSync(join(dir, 'x-new.txt'), 'SWAPPED-IN-BYTES');
    execFileSync('mv', [join(dir, 'x-new.txt'), join(dir, 'b-replaced.txt')]);
    rmSync(join(dir, 'd-fifo.txt'));
    execFileSync('mkfifo', [join(dir, 'd-fifo.txt')]);
    const { skipped, names, tar } = await archiveOf(dir, entries, 'swap');
    assert.deepEqual(skipped, [
      ['a-harmless.txt', 'replaced by a symlink since the scan', false],
      ['b-replaced.txt', 'replaced by another file since the scan', false],
      ['d-fifo.txt', 'replaced by another file since the scan', false],
    ]);
    assert.deepEqual(names, ['c-other.txt']);
    assert.ok(!tar.includes('ROOT-ONLY-SECRET') && !tar.includes('SWAPPED-IN-BYTES'));
  });

  test('a file that shrinks or is deleted while archived: a valid archive, the entry reported as archived incomplete', async () => {
    const dir = join(work, 'shrink');
    mkdirSync(dir);
    writeFileSync(join(dir, 'big.bin'), Buffer.alloc(6 * 1024 * 1024, 0x61));
    writeFileSync(join(dir, 'gone.txt'), 'gone before its turn');
    writeFileSync(join(dir, 'small.txt'), 'small');
    const { entries } = await walk(dir);
    const file = join(work, 'shrink.tar.zst.age');
    let cut = false;
    const result = await writeArchive({
      jobDir: dir,
      entries,
      recipient: key.publicKey,
      outPath: file,
      // After the first 1 MiB block: the big file is emptied and deleted, gone.txt deleted.
      onProgress: () => {
        if (cut) return;
        cut = true;
        writeFileSync(join(dir, 'big.bin'), '');
        rmSync(join(dir, 'big.bin'));
        rmSync(join(dir, 'gone.txt'));
      },
    });
    assert.deepEqual(
      result.skipped.map((s) => [s.path.toString(), s.inArchive]),
      [
        ['big.bin', true],
        ['gone.txt', false],
      ],
    );
    assert.match(result.skipped[0]?.reason ?? '', /^shrank by \d+ bytes while archived; the rest is zeros$/);
    assert.equal(result.skipped[1]?.reason, 'vanished since the scan');
    const dest = extract(file, 'shrink-out');
    assert.deepEqual(Object.keys(byteTree(dest)), ['big.bin', 'small.txt']);
  });

  test('a walk as a user who may not read a file leaves it (and a folder it cannot list) out, and says so', {
    skip: asRoot,
  }, async () => {
    const dir = unreadableTree('as-nobody');
    const seen = asNobody(`
      const { walkJob } = await import(${moduleUrl('jobs/walk.ts')});
      const out = { entries: [], skipped: [] };
      const config = { job_name: 'j', include_hidden: true, follow_symlinks: false, exclude: [] };
      for await (const e of walkJob(${JSON.stringify(dir)}, config, { onSkip: (s) => out.skipped.push([s.path.toString(), s.reason]) }))
        out.entries.push(e.path.toString());
      process.stdout.write(JSON.stringify(out));`);
    assert.deepEqual(seen, {
      entries: ['locked', 'open.txt'],
      skipped: [
        ['closed.txt', 'cannot be read (EACCES)'],
        ['locked', 'folder cannot be read (EACCES); kept empty'],
      ],
    });
  });
});

describe('a walk that leaves files to the archive to examine (filesExaminedByOpener, as a backup walks)', {
  skip: skipUnlessPrograms(['age', 'zstd', 'tar']),
}, () => {
  /** Fingerprints as change detection compares them: plain and with mtimes. */
  const variants = () => new WalkFingerprints([{}, { mtimes: true }]);

  test('the same tar stream, byte for byte, and the same fingerprints as a walk that examines every file', async () => {
    const dir = oddNames(join(work, 'opener'));
    mkdirSync(join(dir, 'sub', 'empty'), { recursive: true });
    writeFileSync(join(dir, 'a-first.txt'), 'shared content\n', { mode: 0o640 });
    linkSync(join(dir, 'a-first.txt'), join(dir, 'sub', 'second.txt'));
    linkSync(join(dir, 'a-first.txt'), join(dir, 'z-third'));
    writeFileSync(join(dir, 'sub', 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(dir, 'skip.tmp'), 'excluded');
    execFileSync('touch', ['-d', '2024-02-29 12:34:56.123456789', join(dir, 'sub', 'run.sh')]);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const config = { ...CONFIG, exclude: ['*.tmp'] };
    const archived = async (name: string, filesExaminedByOpener: boolean) => {
      const fingerprints = variants();
      const file = join(work, `${name}.tar.zst.age`);
      const result = await writeArchive({
        jobDir: dir,
        entries: walkJob(dir, config, { fingerprints, filesExaminedByOpener }),
        recipient: key.publicKey,
        outPath: file,
      });
      assert.deepEqual(result.skipped, []);
      return { tar: readBack(file).tar, digests: fingerprints.digests(), file };
    };
    const examined = await archived('opener-lstat', false);
    const opened = await archived('opener-fstat', true);
    assert.ok(opened.tar.equals(examined.tar), 'the same tar stream');
    assert.deepEqual(opened.digests, examined.digests);
    // What a scan (no archive) finds: change detection sees the job unchanged.
    const scanned = variants();
    for await (const _ of walkJob(dir, config, { fingerprints: scanned })) void _;
    assert.deepEqual(opened.digests, scanned.digests());
    const verbose = execFileSync('tar', ['-tv'], { input: opened.tar }).toString();
    assert.match(verbose, /^hrw.* sub\/second\.txt link to a-first\.txt$/m);
    assert.match(verbose, /^hrw.* z-third link to a-first\.txt$/m);
    const expected = byteTree(dir);
    delete expected.fifo;
    delete expected['skip.tmp'];
    assert.deepEqual(byteTree(extract(opened.file, 'opener-out')), expected);
  });

  test('as a user who may not read a file or list a folder: the archive leaves the file out, the folder is kept empty, the fingerprints are those of a walk that examines', {
    skip: asRoot,
  }, async () => {
    const dir = unreadableTree('as-nobody-opener');
    const seen = asNobody(`
      const { walkJob } = await import(${moduleUrl('jobs/walk.ts')});
      const { WalkFingerprints } = await import(${moduleUrl('jobs/walk-fingerprints.ts')});
      const { writeArchive } = await import(${moduleUrl('archive/pipeline.ts')});
      const { generateScoutKey } = await import(${moduleUrl('archive/x25519.ts')});
      const { mkdtempSync, rmSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const config = { job_name: 'j', include_hidden: true, follow_symlinks: false, exclude: [] };
      const variants = () => new WalkFingerprints([{}, { mtimes: true }]);
      const examined = variants();
      for await (const e of walkJob(${JSON.stringify(dir)}, config, { fingerprints: examined })) void e;
      const opened = variants();
      const walkSkipped = [];
      const out = mkdtempSync(tmpdir() + '/nobody-');
      const result = await writeArchive({
        jobDir: ${JSON.stringify(dir)},
        entries: walkJob(${JSON.stringify(dir)}, config, { fingerprints: opened, filesExaminedByOpener: true, onSkip: (s) => walkSkipped.push([s.path.toString(), s.reason]) }),
        recipient: generateScoutKey().publicKey,
        outPath: out + '/a.tar.zst.age',
      });
      rmSync(out, { recursive: true, force: true });
      process.stdout.write(JSON.stringify({
        walkSkipped,
        archiveSkipped: result.skipped.map((s) => [s.path.toString(), s.reason, s.inArchive]),
        same: JSON.stringify(opened.digests()) === JSON.stringify(examined.digests()),
      }));`);
    assert.deepEqual(seen, {
      walkSkipped: [['locked', 'folder cannot be read (EACCES); kept empty']],
      archiveSkipped: [['closed.txt', 'cannot be opened (EACCES)', false]],
      same: true,
    });
  });

  test('a file created in a folder after the walk listed it ahead is walked; an unchanged folder keeps its listing', async () => {
    const dir = join(work, 'opener-ahead');
    for (const folder of ['a', 'b', 'c']) mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, 'a', 'x'), 'x');
    writeFileSync(join(dir, 'b', 'old'), 'old');
    writeFileSync(join(dir, 'c', 'kept'), 'kept');
    // Folders last changed long ago, as a bench dataset's.
    for (const folder of ['b', 'c']) execFileSync('touch', ['-d', '2020-01-01', join(dir, folder)]);
    const walk = walkJob(dir, CONFIG, { filesExaminedByOpener: true });
    const names: string[] = [];
    const first = await walk.next();
    if (!first.done) names.push(first.value.path.toString());
    // The listings started ahead (b's among them) settle; then b gains a file.
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(join(dir, 'b', 'new'), 'appeared after the listing ahead');
    for (let step = await walk.next(); !step.done; step = await walk.next())
      names.push(step.value.path.toString());
    assert.deepEqual(names, ['a', 'a/x', 'b', 'b/new', 'b/old', 'c', 'c/kept']);
  });

  test('a file swapped after the listing: a symlink or FIFO is left out (never read through), a vanished one too', async () => {
    const dir = join(work, 'opener-swap');
    mkdirSync(dir);
    const secret = join(work, 'opener-root-only.txt');
    writeFileSync(secret, 'ROOT-ONLY-SECRET', { mode: 0o600 });
    for (const name of ['a-link.txt', 'b-kept.txt', 'c-fifo.txt', 'd-gone.txt'])
      writeFileSync(join(dir, name), name);
    const { entries, skipped } = await walk(dir, {}, true);
    assert.deepEqual(skipped, []);
    assert.ok(
      entries.every((entry) => entry.ino === undefined),
      'files left unexamined by the walk',
    );
    rmSync(join(dir, 'a-link.txt'));
    symlinkSync(secret, join(dir, 'a-link.txt'));
    rmSync(join(dir, 'c-fifo.txt'));
    execFileSync('mkfifo', [join(dir, 'c-fifo.txt')]);
    rmSync(join(dir, 'd-gone.txt'));
    const { skipped: left, names, tar } = await archiveOf(dir, entries, 'opener-swap');
    assert.deepEqual(left, [
      ['a-link.txt', 'replaced by a symlink since the scan', false],
      ['c-fifo.txt', 'replaced by another file since the scan', false],
      ['d-gone.txt', 'vanished since the scan', false],
    ]);
    assert.deepEqual(names, ['b-kept.txt']);
    assert.ok(!tar.includes('ROOT-ONLY-SECRET'));
    // The kept file's stats are the archive's fstat, filled into the entry the walk counts.
    const kept = entries.find((entry) => entry.path.toString() === 'b-kept.txt');
    assert.equal(kept?.size, 'b-kept.txt'.length);
    assert.ok(kept?.ino !== undefined && kept.mtimeMs > 0);
  });
});
