// Job folders: the `.upload_dir` marker, relative paths under the scan root, exclusions, the
// walk in archive order, the job fingerprint, folder sizes and job discovery.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AppError } from '../../src/core/errors.ts';
import { discoverJobs } from '../../src/scout/jobs/discovery.ts';
import { createExcluder } from '../../src/scout/jobs/exclude.ts';
import {
  defaultJobName,
  type JobConfig,
  JobConfigInput,
  MARKER,
  parseMarker,
  serializeMarker,
} from '../../src/scout/jobs/marker.ts';
import { resolveInScanRoot, toRelative } from '../../src/scout/jobs/scan-root.ts';
import {
  type FingerprintEntry,
  folderSize,
  jobFingerprint,
  type WalkEntry,
  walkJob,
} from '../../src/scout/jobs/walk.ts';
import { buildTree } from '../helpers/files.ts';

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** Memory-backed when the machine has it: 100,000 folders on a disk take seconds to remove. */
function fastTmp(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

function tempDir(base = tmpdir()): string {
  const dir = mkdtempSync(join(base, 'backupd-jobs-'));
  temps.push(dir);
  return dir;
}

const config = (overrides: Partial<JobConfig> = {}): JobConfig => ({
  job_name: 'job',
  include_hidden: true,
  follow_symlinks: false,
  exclude: [],
  ...overrides,
});

async function walk(dir: string, overrides: Partial<JobConfig> = {}): Promise<WalkEntry[]> {
  const entries: WalkEntry[] = [];
  for await (const entry of walkJob(dir, config(overrides))) entries.push(entry);
  return entries;
}

const listing = (entries: WalkEntry[]) => entries.map((e) => `${e.type[0]} ${e.path}`);

function errorOf(parsed: ReturnType<typeof parseMarker>): string {
  assert.equal(parsed.config, null, 'expected an error');
  return parsed.error as string;
}

describe('marker', () => {
  test('empty, blank and comment-only markers give the defaults', () => {
    for (const text of ['', '  \n\n', '# just a comment\n# another\n', '---\n']) {
      assert.deepEqual(parseMarker(text, 'Photos 2024'), {
        config: {
          job_name: 'Photos-2024',
          include_hidden: true,
          follow_symlinks: false,
          exclude: [],
          change_detection: 'sizes',
        },
        error: null,
      });
    }
  });

  test('default job names are valid namespace components', () => {
    assert.equal(defaultJobName('Photos 2024'), 'Photos-2024');
    assert.equal(defaultJobName('.config'), 'config');
    assert.equal(defaultJobName('...'), 'job');
    assert.equal(defaultJobName(''), 'job');
    assert.equal(defaultJobName('ä/ö'), '---');
    assert.equal(defaultJobName('x'.repeat(100)), 'x'.repeat(64));
  });

  test('a full marker is read as written', () => {
    const text =
      'job_name: docs\ninclude_hidden: false\nfollow_symlinks: true\nexclude:\n  - "*.tmp"\n  - cache/\nchange_detection: mtimes\n';
    assert.deepEqual(parseMarker(text, 'x').config, {
      job_name: 'docs',
      include_hidden: false,
      follow_symlinks: true,
      exclude: ['*.tmp', 'cache/'],
      change_detection: 'mtimes',
    });
    assert.deepEqual(parseMarker('exclude:\n', 'x').config?.exclude, []);
  });

  test('each problem is an error that says what to do, never a guess', () => {
    const cases: Array<[string, RegExp]> = [
      ['job_name: [unclosed\n', /not valid YAML at line \d+.*fix it/],
      ['a: 1\na: 2\n', /not valid YAML/],
      ['- one\n- two\n', /must be a mapping/],
      ['hello\n', /must be a mapping/],
      ['job_nam: x\n', /unknown key "job_nam"; allowed keys are job_name, include_hidden/],
      ['include_hidden: yes\n', /include_hidden must be true or false/],
      ['follow_symlinks: 1\n', /follow_symlinks must be true or false/],
      ['exclude: "*.tmp"\n', /exclude must be a list of patterns/],
      ['exclude: [1, 2]\n', /exclude must be a list of patterns written as text/],
      ['job_name: ../etc\n', /job_name must be 1 to 64 characters.*choose another job_name/],
      ['job_name: ".."\n', /job_name must be/],
      ['job_name: 2024\n', /job_name must be text \(quote it/],
      ['change_detection: content\n', /change_detection must be sizes .* or mtimes/],
      ['change_detection: true\n', /change_detection must be sizes/],
      [`job_name: ${'a'.repeat(65)}\n`, /job_name must be/],
    ];
    for (const [text, pattern] of cases) {
      const error = errorOf(parseMarker(text, 'folder'));
      assert.match(error, /^\.upload_dir: /, text);
      assert.match(error, pattern, text);
    }
  });

  test('serializeMarker writes only given fields and reads back the same', () => {
    assert.equal(serializeMarker({}), '');
    assert.deepEqual(parseMarker(serializeMarker({}), 'f').config, parseMarker('', 'f').config);
    assert.equal(serializeMarker({ include_hidden: false }).trim(), 'include_hidden: false');
    const full: JobConfig = {
      job_name: 'my.job_1',
      include_hidden: false,
      follow_symlinks: true,
      change_detection: 'mtimes',
      exclude: [
        '*.log',
        '!keep.log',
        '#not-a-comment',
        '- dash',
        'a: b',
        ' lead',
        "it's",
        '"q"',
        'true',
        '123',
        '',
        '~',
      ],
    };
    assert.deepEqual(parseMarker(serializeMarker(full), 'other').config, full);
    assert.deepEqual(parseMarker(serializeMarker({ exclude: ['x/'] }), 'Fold er').config, {
      job_name: 'Fold-er',
      include_hidden: true,
      follow_symlinks: false,
      exclude: ['x/'],
      change_detection: 'sizes',
    });
    // The default needs no line of its own.
    assert.equal(serializeMarker({ change_detection: 'sizes' }), '');
  });

  test('JobConfigInput is strict and names the field', () => {
    assert.deepEqual(JobConfigInput.parse({ include_hidden: false }), { include_hidden: false });
    const messages = (value: unknown) =>
      JobConfigInput.safeParse(value).error?.issues.map((issue) => issue.message) ?? [];
    assert.match(messages({ colour: 'red' })[0] ?? '', /unknown key "colour"/);
    assert.match(messages({ job_name: 'a/b' })[0] ?? '', /^job_name must be/);
    assert.match(messages({ include_hidden: 'no' })[0] ?? '', /^include_hidden must be true or false/);
    assert.match(messages({ exclude: ['a\nb'] })[0] ?? '', /^exclude patterns must be single lines/);
    assert.match(messages([])[0] ?? '', /must be a mapping/);
  });
});

describe('resolveInScanRoot', () => {
  const root = tempDir();
  const outside = tempDir();
  buildTree(root, { 'a/b/': null, 'a/file.txt': 'x', 'inside-link': '-> a', 'out-link': `-> ${outside}` });
  buildTree(root, { dangling: `-> ${join(outside, 'missing')}` });

  test('resolves paths under the scan root without resolving symlinks', async () => {
    assert.equal(await resolveInScanRoot(root, '.'), root);
    assert.equal(await resolveInScanRoot(root, 'a/b'), join(root, 'a/b'));
    assert.equal(await resolveInScanRoot(root, './a//b/'), join(root, 'a/b'));
    assert.equal(await resolveInScanRoot(root, 'inside-link/b'), join(root, 'inside-link/b'));
    assert.equal(await resolveInScanRoot(root, 'a/not-yet/deeper'), join(root, 'a/not-yet/deeper'));
    assert.equal(toRelative(root, join(root, 'a/b')), 'a/b');
    assert.equal(toRelative(root, root), '.');
  });

  test('refuses anything that could lead outside', async () => {
    const refused: Array<[string, RegExp]> = [
      ['', /required/],
      ['/etc', /absolute/],
      ['a\\b', /separator/],
      ['a\0b', /NUL/],
      ['..', /\.\./],
      ['a/../a', /\.\./],
      ['a/b/..', /\.\./],
      ['out-link', /outside/],
      ['out-link/x/y', /outside/],
      ['dangling', /symlink/],
      ['dangling/x', /symlink/],
    ];
    for (const [path, detail] of refused) {
      await assert.rejects(resolveInScanRoot(root, path), (error: unknown) => {
        assert.ok(error instanceof AppError, path);
        assert.equal(error.status, 400, path);
        assert.match(String(error.detail), /^relative_path /, path);
        assert.match(String(error.detail), detail, path);
        return true;
      });
    }
  });
});

describe('exclusions', () => {
  test('answers stay the same past the paths one matcher caches (exclude.ts renews it every 10,000)', () => {
    const ex = createExcluder(['build/', '*.log', '!keep.log'], true);
    for (let i = 0; i < 25_000; i += 1) {
      const folder = `src/m${i % 37}`;
      assert.equal(ex.excluded(`${folder}/f${i}.ts`, false), false);
      assert.equal(ex.excluded(`${folder}/f${i}.log`, false), true);
      assert.equal(ex.excluded(`${folder}/keep.log`, false), false);
      assert.equal(ex.excluded(`build/${folder}/f${i}.ts`, false), true);
    }
  });

  test('gitignore patterns: globs, negation, folders only, anchors, **', () => {
    const ex = createExcluder(
      ['*.log', '!keep.log', 'build/', '/top.txt', 'docs/**/draft-?.md', 'cache'],
      true,
    );
    assert.equal(ex.reason('x.log', false), '*.log');
    assert.equal(ex.reason('deep/x.log', false), '*.log');
    assert.equal(ex.reason('keep.log', false), null);
    assert.equal(ex.reason('build', false), null, 'a trailing / matches folders only');
    assert.equal(ex.reason('build', true), 'build/');
    assert.equal(ex.reason('sub/build', true), 'build/');
    assert.equal(ex.reason('build/out.bin', false), 'build/', 'inside an excluded folder');
    assert.equal(ex.reason('top.txt', false), '/top.txt');
    assert.equal(ex.reason('sub/top.txt', false), null, 'a leading / anchors');
    assert.equal(ex.reason('docs/a/b/draft-1.md', false), 'docs/**/draft-?.md');
    assert.equal(ex.reason('docs/draft-12.md', false), null);
    assert.equal(ex.reason('cache', true), 'cache');
    assert.equal(ex.reason('X.LOG', false), null, 'case-sensitive');
    assert.equal(ex.excluded('a.txt', false), false);
  });

  test('hidden paths and the marker', () => {
    const shown = createExcluder([], true);
    assert.equal(shown.reason('.env', false), null);
    assert.equal(shown.reason(MARKER, false), 'marker');
    assert.equal(shown.reason(`sub/${MARKER}`, false), null, 'a nested marker is data');
    const hidden = createExcluder([], false);
    assert.equal(hidden.reason('.env', false), 'hidden');
    assert.equal(hidden.reason('a/.git', true), 'hidden');
    assert.equal(hidden.reason('a/.git/config', false), 'hidden');
    assert.equal(hidden.reason('a/b.txt', false), null);
  });
});

describe('walk', () => {
  test('folders (empty too), files and links in the byte order of their paths, parents first', async () => {
    const dir = buildTree(tempDir(), {
      'b.txt': 'bb',
      'a/': null,
      'a/z.txt': 'z',
      'a.b': '',
      B: 'upper',
      'empty/': null,
      link: '-> b.txt',
      [MARKER]: '',
    });
    const entries = await walk(dir);
    // "a.b" sorts before "a/z.txt" ('.' < '/'), so before the folder "a" too (walk-order.ts).
    assert.deepEqual(listing(entries), ['f B', 'f a.b', 'd a', 'f a/z.txt', 'f b.txt', 'd empty', 's link']);
    const byPath = new Map(entries.map((e) => [e.path.toString(), e]));
    assert.equal(byPath.get('b.txt')?.size, 2);
    assert.equal(byPath.get('link')?.linkTarget?.toString(), 'b.txt');
    assert.equal(byPath.get('link')?.size, 0);
    assert.ok((byPath.get('a')?.mode ?? 0) & 0o700);
  });

  test('followed symlinks appear as what they point to; loops and dangling links are skipped', async () => {
    const outside = buildTree(tempDir(), { 'o.txt': 'outside' });
    const dir = buildTree(tempDir(), {
      'real/f.txt': 'f',
      'to-real': '-> real',
      'to-out': `-> ${outside}`,
      'real/loop': '-> ..',
      self: '-> self',
      gone: '-> nowhere',
    });
    assert.deepEqual(listing(await walk(dir)), [
      's gone',
      'd real',
      'f real/f.txt',
      's real/loop',
      's self',
      's to-out',
      's to-real',
    ]);
    const followed = await walk(dir, { follow_symlinks: true });
    assert.deepEqual(listing(followed), [
      'd real',
      'f real/f.txt',
      'd to-out',
      'f to-out/o.txt',
      'd to-real',
      'f to-real/f.txt',
    ]);
    assert.equal(followed.find((e) => e.path.toString() === 'to-out/o.txt')?.size, 7);
  });

  test('exclusions apply; an excluded folder is not entered, so negations inside it do nothing', async () => {
    const dir = buildTree(tempDir(), {
      'node_modules/keep.txt': '',
      'src/a.ts': '',
      'src/a.log': '',
      '.git/HEAD': '',
      '.env': '',
    });
    assert.deepEqual(
      listing(await walk(dir, { exclude: ['node_modules/', '!node_modules/keep.txt', '*.log'] })),
      ['f .env', 'd .git', 'f .git/HEAD', 'd src', 'f src/a.ts'],
    );
    assert.deepEqual(listing(await walk(dir, { include_hidden: false })), [
      'd node_modules',
      'f node_modules/keep.txt',
      'd src',
      'f src/a.log',
      'f src/a.ts',
    ]);
  });

  test('files and folders that vanish mid-walk, and FIFOs, are skipped', async () => {
    const dir = buildTree(tempDir(), { 'a/gone.txt': '', 'a/stay.txt': '', 'b/x.txt': '', 'c.txt': '' });
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const seen: string[] = [];
    for await (const entry of walkJob(dir, config())) {
      seen.push(entry.path.toString());
      if (entry.path.toString() === 'a') {
        await rm(join(dir, 'a/gone.txt'));
        await rm(join(dir, 'b'), { recursive: true });
      }
    }
    assert.deepEqual(seen, ['a', 'a/stay.txt', 'c.txt']);
  });

  test('an aborted walk throws the reason promptly', async () => {
    const dir = buildTree(tempDir(), { 'a/1': '', 'a/2': '', 'b/3': '' });
    const controller = new AbortController();
    const reason = new Error('stop now');
    await assert.rejects(async () => {
      for await (const entry of walkJob(dir, config(), { signal: controller.signal })) {
        if (entry.path.toString() === 'a') controller.abort(reason);
      }
    }, reason);
    const aborted = AbortSignal.abort(reason);
    await assert.rejects(walkJob(dir, config(), { signal: aborted }).next(), reason);
  });

  test('a missing job folder is an error', async () => {
    await assert.rejects(walkJob(join(tempDir(), 'missing'), config()).next(), /unable to read job folder/);
  });
});

describe('fingerprint and size', () => {
  test('stable, sensitive to sizes and empty folders, blind to same-size edits', async () => {
    const dir = buildTree(tempDir(), { 'a.txt': 'hello', 'sub/b.txt': 'x', 'empty/': null, ln: '-> a.txt' });
    const first = jobFingerprint(await walk(dir));
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(jobFingerprint(await walk(dir)), first);
    assert.equal(jobFingerprint((await walk(dir)).reverse()), first, 'order of entries does not matter');

    writeFileSync(join(dir, 'a.txt'), 'HELLO');
    assert.equal(jobFingerprint(await walk(dir)), first, 'same-size edits are not seen');

    truncateSync(join(dir, 'a.txt'), 6);
    const grown = jobFingerprint(await walk(dir));
    assert.notEqual(grown, first);

    mkdirSync(join(dir, 'new-empty'));
    const withFolder = jobFingerprint(await walk(dir));
    assert.notEqual(withFolder, grown);

    writeFileSync(join(dir, 'empty/now-full'), '');
    assert.notEqual(jobFingerprint(await walk(dir)), withFolder);
  });

  test('the byte format is the documented one', () => {
    const entries: FingerprintEntry[] = [
      { path: Buffer.from('z'), type: 'file', size: 3 },
      { path: 'd', type: 'dir', size: 0 },
      { path: 'd/e', type: 'dir', size: 0 },
      { path: Buffer.from('l'), type: 'symlink', size: 0 },
    ];
    const expected = execFileSync('sha256sum', { input: 'd d/e\0\nf l\x000\nf z\x003\n' })
      .toString()
      .slice(0, 64);
    assert.equal(jobFingerprint(entries), expected);
  });

  test('folderSize counts every file, excluded ones too, without following links', async () => {
    const outside = buildTree(tempDir(), { big: 'x'.repeat(1000) });
    const dir = buildTree(tempDir(), {
      [MARKER]: 'exclude: ["*.log"]\n',
      'a.log': '12345',
      'sub/.hidden': '123',
      out: `-> ${outside}`,
      'empty/': null,
    });
    assert.deepEqual(await folderSize(dir), { bytes: 5 + 3 + 19, files: 3 });
  });
});

describe('discovery', () => {
  test('finds jobs, ignores nested markers, flags bad markers and duplicate names', async () => {
    const root = buildTree(tempDir(), {
      'photos/.upload_dir': '',
      'photos/inner/.upload_dir': 'job_name: inner\n',
      'work/docs/.upload_dir': 'job_name: photos\n',
      'work/bad/.upload_dir': 'include_hidden: maybe\n',
      'work/dirmarker/.upload_dir/': null,
      'plain/file.txt': '',
      linked: `-> ${join(tempDir(), 'nowhere')}`,
      'a-first/.upload_dir': 'job_name: unique\n',
    });
    const outside = buildTree(tempDir(), { 'outer/.upload_dir': '' });
    symlinkSync(outside, join(root, 'via-link'));
    const jobs = await discoverJobs(root);
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config?.job_name ?? null, job.config_error]),
      [
        ['a-first', 'unique', null],
        ['photos', null, 'job name "photos" is already used by work/docs; set another job_name'],
        ['work/bad', null, '.upload_dir: include_hidden must be true or false'],
        ['work/docs', null, 'job name "photos" is already used by photos; set another job_name'],
      ],
    );
    assert.equal(jobs[1]?.absolute_path, join(root, 'photos'));
  });

  test('a job that already ran under a name keeps it; only the newcomer gets a config_error (issue #23 item 4)', async () => {
    const root = buildTree(tempDir(), {
      'aaa-shared/.upload_dir': 'job_name: payroll\n',
      'finance/payroll/.upload_dir': '',
    });
    const ranAs = new Map([['finance/payroll', 'payroll']]);
    const jobs = await discoverJobs(root, { history: { ranAs, ownUid: 0 } });
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config?.job_name ?? null, job.config_error, job.lost_claim]),
      [
        [
          'aaa-shared',
          null,
          'job name "payroll" is already used by finance/payroll; set another job_name',
          { name: 'payroll', kept_by: 'finance/payroll' },
        ],
        ['finance/payroll', 'payroll', null, undefined],
      ],
    );
  });

  test("of new claimants only, the one whose marker the Scout's own user owns keeps the name", async () => {
    const root = buildTree(tempDir(), {
      'aaa-shared/.upload_dir': 'job_name: ledger\n',
      'ledger/.upload_dir': '',
      'x/.upload_dir': 'job_name: both-foreign\n',
      'y/.upload_dir': 'job_name: both-foreign\n',
    });
    for (const path of ['aaa-shared', 'x', 'y']) chownSync(join(root, path, '.upload_dir'), 65534, 65534);
    const jobs = await discoverJobs(root, { history: { ranAs: new Map(), ownUid: 0 } });
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config?.job_name ?? null, job.config_error]),
      [
        ['aaa-shared', null, 'job name "ledger" is already used by ledger; set another job_name'],
        ['ledger', 'ledger', null],
        ['x', null, 'job name "both-foreign" is already used by y; set another job_name'],
        ['y', null, 'job name "both-foreign" is already used by x; set another job_name'],
      ],
    );
    assert.deepEqual(jobs[3]?.lost_claim, { name: 'both-foreign', kept_by: null });
  });

  test('two folders that both ran under one name fall back to the marker owner; history of another name does not count', async () => {
    const root = buildTree(tempDir(), {
      'a/.upload_dir': 'job_name: same\n',
      'b/.upload_dir': 'job_name: same\n',
      'c/.upload_dir': 'job_name: same\n',
    });
    chownSync(join(root, 'b', '.upload_dir'), 65534, 65534);
    // a and b ran as "same"; c ran under an older name, so it is no more established than new.
    const ranAs = new Map([
      ['a', 'same'],
      ['b', 'same'],
      ['c', 'old-name'],
    ]);
    const jobs = await discoverJobs(root, { history: { ranAs, ownUid: 0 } });
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config?.job_name ?? null]),
      [
        ['a', 'same'],
        ['b', null],
        ['c', null],
      ],
    );
  });

  test('every folder claiming one job_name gets a config_error naming the others', async () => {
    const root = buildTree(tempDir(), {
      'a/.upload_dir': 'job_name: same\n',
      'b/.upload_dir': 'job_name: same\n',
      'c/.upload_dir': 'job_name: same\n',
      'd/.upload_dir': 'job_name: other\n',
    });
    const jobs = await discoverJobs(root);
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config, job.config_error]),
      [
        ['a', null, 'job name "same" is already used by b, c; set another job_name'],
        ['b', null, 'job name "same" is already used by a, c; set another job_name'],
        ['c', null, 'job name "same" is already used by a, b; set another job_name'],
        [
          'd',
          {
            job_name: 'other',
            include_hidden: true,
            follow_symlinks: false,
            exclude: [],
            change_detection: 'sizes',
          },
          null,
        ],
      ],
    );
  });

  test('a marker that is a symlink, a FIFO or too large is never read as a job configuration', async () => {
    const outside = buildTree(tempDir(), { 'secret.yaml': 'job_name: stolen\n' });
    const root = buildTree(tempDir(), {
      'linked/keep.txt': 'x',
      'big/.upload_dir': `# ${'x'.repeat(70 * 1024)}\n`,
    });
    symlinkSync(join(outside, 'secret.yaml'), join(root, 'linked', MARKER));
    mkdirSync(join(root, 'fifo'));
    execFileSync('mkfifo', [join(root, 'fifo', MARKER)]);
    const jobs = await discoverJobs(root);
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config_error]),
      [['big', '.upload_dir: larger than 64 KiB; shorten it']],
    );
  });

  test('the scan root itself can be a job; a missing scan root has none', async () => {
    const root = buildTree(tempDir(), { [MARKER]: 'job_name: everything\n', 'sub/.upload_dir': '' });
    const jobs = await discoverJobs(root);
    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.absolute_path, job.config?.job_name]),
      [['.', root, 'everything']],
    );
    assert.deepEqual(await discoverJobs(join(root, 'missing')), []);
  });

  test('an aborted discovery or size count throws the reason', async () => {
    const root = buildTree(tempDir(), { 'a/.upload_dir': '', 'b/c.txt': 'x' });
    const reason = new Error('shutting down');
    await assert.rejects(discoverJobs(root, { signal: AbortSignal.abort(reason) }), reason);
    await assert.rejects(folderSize(root, { signal: AbortSignal.abort(reason) }), reason);
  });

  test('100,000 folders: discovery finishes and the event loop keeps ticking', async (t) => {
    const root = tempDir(fastTmp());
    for (let top = 0; top < 100; top++) {
      const parent = join(root, `t${String(top).padStart(3, '0')}`);
      mkdirSync(parent);
      for (let leaf = 0; leaf < 1000; leaf++) mkdirSync(join(parent, `f${leaf}`));
    }
    writeFileSync(join(root, 't042/f7', MARKER), '');
    writeFileSync(join(root, 't099/f999', MARKER), 'job_name: last\n');

    // The event loop keeps turning: count turns of a setImmediate chain while discovery runs.
    // A walk that never yields gives ~0 turns; one that yields per folder gives thousands. Counting
    // turns instead of timing gaps keeps the test true on a loaded machine.
    let turns = 0;
    let counting = true;
    const turn = (): void => {
      turns += 1;
      if (counting) setImmediate(turn);
    };
    setImmediate(turn);
    const started = performance.now();
    const jobs = await discoverJobs(root);
    const elapsed = performance.now() - started;
    counting = false;

    assert.deepEqual(
      jobs.map((job) => [job.relative_path, job.config?.job_name]),
      [
        ['t042/f7', 'f7'],
        ['t099/f999', 'last'],
      ],
    );
    t.diagnostic(`100,100 folders in ${elapsed.toFixed(0)} ms, ${turns} event-loop turns`);
    assert.ok(turns >= 1000, `the event loop turned only ${turns} times during discovery`);
  });
});
