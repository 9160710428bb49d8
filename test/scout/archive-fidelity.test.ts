// Every file comes back (issue #24, backup side): a tree with the entries real hosts have is
// walked and archived by the Scout's pipeline (walkJob → writeArchive) and extracted by the
// real `age -d | zstd -d | tar --xattrs --xattrs-include='*' -x` (and bsdtar), byte for byte.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type ArchiveResult, writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { jobFingerprint, type SkippedEntry, type WalkEntry, walkJob } from '../../src/scout/jobs/walk.ts';
import { escapeName } from '../../src/shared/byte-names.ts';
import { byteTree } from '../helpers/byte-tree.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

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

async function walk(dir: string, config: Partial<JobConfig> = {}) {
  const entries: WalkEntry[] = [];
  const skipped: SkippedEntry[] = [];
  for await (const entry of walkJob(dir, { ...CONFIG, ...config }, { onSkip: (s) => skipped.push(s) }))
    entries.push(entry);
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
