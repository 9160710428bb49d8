// `backupd scout restore`: the disaster-recovery path without a running Scout service. A real
// Station and Scout make a snapshot; the CLI (run from source) restores it from the Station,
// from the Scout's data dir, or from a local archive, and refuses what it must refuse with
// one line on stderr.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { buildTree, jobTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import {
  backupJob,
  connectScout,
  mintStationToken,
  scoutStatus,
  startScout,
  startStation,
} from '../helpers/scout.ts';
import { runBackupd, type TestServer } from '../helpers/server.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);

const JOB = 'cli-job';
// No Station settings leak in from the environment.
const ENV = { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' };

/** `backupd scout restore --job <job> --dest <dest> <args>`, no Station settings from the environment. */
const restoreCli = (job: string, dest: string, ...args: string[]) =>
  runBackupd(['scout', 'restore', '--job', job, '--dest', dest, ...args], { env: ENV });

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** Exit `code` (1: failed, 2: usage) and exactly one line on stderr; returns that line. */
function oneLineFailure(result: { code: number | null; stdout: string; stderr: string }, code = 1): string {
  assert.equal(
    result.code,
    code,
    `expected exit ${code}; stdout: ${result.stdout}; stderr: ${result.stderr}`,
  );
  const errorLines = lines(result.stderr);
  assert.equal(errorLines.length, 1, `exactly one line on stderr, got:\n${result.stderr}`);
  return errorLines[0] ?? '';
}

describe('backupd scout restore', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let scoutAdmin: Client;
  let stationAdmin: Client;
  let credential: string;
  let scoutId: string;
  let instanceId: string;
  let keyBase64: string;
  let ageRecipient: string;
  let source: string;
  let snapshot: string;
  const work = mkdtempSync(join(tmpdir(), 'backupd-restore-cli-'));
  let n = 0;
  const dir = (name: string) => {
    n += 1;
    return join(work, `${name}-${n}`);
  };
  /** A key file holding `key` (the failure tests use it: `--key` adds a warning line on stderr). */
  const keyFileOf = (key: string) => {
    const path = dir('key.txt');
    writeFileSync(path, `${key}\n`);
    return path;
  };
  const stationFlags = () => [
    '--station-url',
    station.url,
    '--token',
    credential,
    '--scout-id',
    scoutId,
    '--instance-id',
    instanceId,
  ];

  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    ({ server: scout, admin: scoutAdmin } = await startScout({
      fill: (scan) => makeSource(join(scan, JOB)),
    }));
    credential = await connectScout(scoutAdmin, stationAdmin, 'cli-host');
    snapshot = await backupJob(scoutAdmin, JOB);
    const status = await scoutStatus(scoutAdmin);
    scoutId = status.scout_id;
    instanceId = status.scout_instance_id;
    const key = await scoutAdmin.get('/api/encryption-key');
    keyBase64 = key.body.key_base64;
    ageRecipient = key.body.age_recipient;
  });

  /** The job folder the snapshot is made of: files, an empty folder, a link, modes and mtimes. */
  function makeSource(folder: string): void {
    source = buildTree(folder, {
      'sub/empty/': null,
      'private/': null,
      '.upload_dir': '',
      'readme.txt': 'hello from the snapshot\n',
      '.hidden': 'dotfiles are data too',
      'sub/run.sh': '#!/bin/sh\necho run\n',
      'sub/blob.bin': Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 253)),
      'private/secret.txt': 'shh',
      'sub/readme-link': '-> ../readme.txt',
    });
    chmodSync(join(source, 'sub', 'run.sh'), 0o755);
    chmodSync(join(source, 'private', 'secret.txt'), 0o600);
    chmodSync(join(source, 'private'), 0o700);
    chmodSync(join(source, 'readme.txt'), 0o644);
    utimesSync(join(source, 'readme.txt'), 1_600_000_000, 1_600_000_000);
    utimesSync(join(source, 'sub', 'run.sh'), 1_500_000_000, 1_500_000_000);
  }

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('from the Station with explicit flags: a byte-identical tree and a summary on stdout', async () => {
    const dest = dir('dest');
    mkdirSync(dest, { recursive: true });
    const result = await restoreCli(JOB, dest, ...stationFlags(), '--key', keyBase64);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(jobTree(dest), jobTree(source));
    const summary = lines(result.stdout);
    assert.ok(summary.length >= 1, 'a summary on stdout');
    assert.match(result.stdout, new RegExp(snapshot.replace(/\./g, '\\.')));
    assert.match(result.stdout, /5 added/);
    assert.match(result.stdout, /0 replaced/);
    assert.match(result.stdout, /, 146\.\d KiB$/m, 'the size in binary units, not bytes');
  });

  test('--path restores only the chosen file and folder, at their paths below --dest', async () => {
    const dest = dir('dest');
    const result = await restoreCli(
      JOB,
      dest,
      '--data-dir',
      scout.dataDir,
      '--path',
      'readme.txt',
      '--path',
      'sub/',
    );
    assert.equal(result.code, 0, result.stderr);
    const tree = jobTree(dest);
    assert.deepEqual(
      Object.keys(tree).sort(),
      Object.keys(jobTree(source))
        .filter((p) => p === 'readme.txt' || p.startsWith('sub'))
        .sort(),
    );
    assert.match(result.stdout, /3 added/);
    const bad = await restoreCli(JOB, dir('dest'), '--data-dir', scout.dataDir, '--path', '../etc');
    assert.match(oneLineFailure(bad, 2), /--path "\.\.\/etc" has "\.\."/);
  });

  test('--list-files prints the entries with sizes and writes nothing', async () => {
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--data-dir', scout.dataDir, '--list-files'],
      { env: ENV },
    );
    assert.equal(result.code, 0, result.stderr);
    const out = lines(result.stdout).map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(
      out.find((cols) => cols[1] === 'readme.txt'),
      ['24 B', 'readme.txt'],
    );
    assert.deepEqual(
      out.find((cols) => cols[1] === 'sub/blob.bin'),
      ['146.5 KiB', 'sub/blob.bin'],
    );
    assert.deepEqual(
      out.find((cols) => cols[1] === 'sub/empty/'),
      ['folder', 'sub/empty/'],
    );
    assert.match(result.stderr, /5 files, 146\.\d KiB/);
  });

  test('--list without --job lists the jobs; --list of a job that does not exist exits 1 naming the jobs', async () => {
    const jobs = await runBackupd(['scout', 'restore', '--list', '--data-dir', scout.dataDir], { env: ENV });
    assert.equal(jobs.code, 0, jobs.stderr);
    assert.match(
      jobs.stdout,
      new RegExp(`^${JOB}  1 snapshot, newest \\d{4}-.* \\(\\d+(\\.\\d+)? (B|KiB)\\)$`, 'm'),
    );
    const unknown = await runBackupd(
      ['scout', 'restore', '--list', '--job', 'no-such-job', '--data-dir', scout.dataDir],
      { env: ENV },
    );
    assert.match(oneLineFailure(unknown), new RegExp(`no job no-such-job .*jobs there: ${JOB}`));
    const noJob = await runBackupd(['scout', 'restore', '--dest', dir('dest'), '--data-dir', scout.dataDir], {
      env: ENV,
    });
    assert.match(oneLineFailure(noJob, 2), /--job/);
  });

  test('--data-dir alone: key, settings and instance ID come from the Scout’s data dir', async () => {
    const dest = dir('dest');
    const result = await restoreCli(JOB, dest, '--data-dir', scout.dataDir);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(jobTree(dest), jobTree(source));
  });

  test('--fingerprint and --file pick the snapshot', async () => {
    const fp8 = snapshot.split('__')[2]?.slice(0, 8) ?? '';
    const byFp = dir('dest');
    const one = await restoreCli(JOB, byFp, '--data-dir', scout.dataDir, '--fingerprint', fp8);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(jobTree(byFp), jobTree(source));
    const byFile = dir('dest');
    const two = await restoreCli(JOB, byFile, '--data-dir', scout.dataDir, '--file', snapshot);
    assert.equal(two.code, 0, two.stderr);
    assert.deepEqual(jobTree(byFile), jobTree(source));
    const bad = await restoreCli(JOB, dir('dest'), '--data-dir', scout.dataDir, '--fingerprint', 'XYZ');
    oneLineFailure(bad, 2);
  });

  test('--dry-run lists add and replace lines and writes nothing', async () => {
    const dest = dir('dest');
    mkdirSync(dest, { recursive: true });
    writeFileSync(join(dest, 'readme.txt'), 'local copy');
    const before = jobTree(dest);
    const result = await restoreCli(JOB, dest, ...stationFlags(), '--key', keyBase64, '--dry-run');
    assert.equal(result.code, 0, result.stderr);
    const out = lines(result.stdout);
    const adds = out.filter((l) => l.startsWith('add ')).sort();
    const replaces = out.filter((l) => l.startsWith('replace ')).sort();
    assert.deepEqual(adds, ['add .hidden', 'add private/secret.txt', 'add sub/blob.bin', 'add sub/run.sh']);
    assert.deepEqual(replaces, ['replace readme.txt']);
    assert.deepEqual(jobTree(dest), before, 'nothing written');
    const fresh = dir('dest');
    const none = await restoreCli(JOB, fresh, ...stationFlags(), '--key', keyBase64, '--dry-run');
    assert.equal(none.code, 0, none.stderr);
    assert.equal(lines(none.stdout).filter((l) => l.startsWith('add ')).length, 5);
    assert.ok(!existsSync(fresh), 'a dry run does not even create the folder');
  });

  test('--archive with --key-file works offline', async () => {
    const res = await fetch(`${station.url}/backup/recovery/${scoutId}/${instanceId}/${JOB}/latest`, {
      headers: { authorization: `Bearer ${credential}` },
    });
    assert.equal(res.status, 200);
    const archive = join(work, 'local.tar.zst');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
    const keyFile = join(work, 'key.txt');
    writeFileSync(keyFile, `${keyBase64}\n`);
    const dest = dir('dest');
    const result = await restoreCli(
      JOB,
      dest,
      '--archive',
      archive,
      '--key-file',
      keyFile,
      '--station-url',
      'http://127.0.0.1:9', // never contacted
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(jobTree(dest), jobTree(source));
  });

  test('a wrong key: exit 1 and one line on stderr', async () => {
    const dest = dir('dest');
    const result = await restoreCli(
      JOB,
      dest,
      ...stationFlags(),
      '--key-file',
      keyFileOf(generateScoutKey().keyBase64),
    );
    const line = oneLineFailure(result);
    assert.match(line, /key/i);
    assert.equal(existsSync(dest), false, 'no empty folder left behind');
    // A folder that was there stays, empty.
    mkdirSync(dest);
    const again = await restoreCli(
      JOB,
      dest,
      ...stationFlags(),
      '--key-file',
      keyFileOf(generateScoutKey().keyBase64),
    );
    oneLineFailure(again);
    assert.deepEqual(readdirSync(dest), [], 'nothing restored');
  });

  test('a missing snapshot (unknown job): exit 1 and one line', async () => {
    const result = await restoreCli(
      'no-such-job',
      dir('dest'),
      ...stationFlags(),
      '--key-file',
      keyFileOf(keyBase64),
    );
    const line = oneLineFailure(result);
    assert.match(line, new RegExp(`no job no-such-job .*jobs there: ${JOB}`));
  });

  test('a bad token: exit 1 and one line', async () => {
    const flags = stationFlags();
    flags[3] = 'not-a-valid-station-token';
    const result = await restoreCli(JOB, dir('dest'), ...flags, '--key-file', keyFileOf(keyBase64));
    const line = oneLineFailure(result);
    assert.match(line, /token|401|unauthori|sign/i);
  });

  test('a hostile local archive (absolute path entry): exit 1 and one line naming the entry', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    const stage = join(work, 'stage');
    mkdirSync(stage, { recursive: true });
    writeFileSync(join(stage, 'pwned.txt'), 'pwned');
    const target = `${outside}/pwned.txt`;
    const archive = join(work, 'hostile.tar.zst');
    writeFileSync(
      archive,
      archiveWithTools(stage, ['-P', `--transform=s,^pwned.txt,${target},`, 'pwned.txt'], ageRecipient),
    );
    const dest = dir('dest');
    const result = await restoreCli(JOB, dest, '--archive', archive, '--key-file', keyFileOf(keyBase64));
    const line = oneLineFailure(result);
    assert.ok(line.includes(target), `the line names the entry: ${line}`);
    assert.match(line, /unsafe|absolute/i);
    assert.deepEqual(readdirSync(outside), [], 'nothing written outside');
    rmSync(outside, { recursive: true, force: true });
  });

  test('entries the destination refuses: the rest restored, each problem on stderr, a summary last, exit 4', async () => {
    const stage = join(work, 'stage-problems');
    mkdirSync(join(stage, 'locked'), { recursive: true });
    const latin1 = Buffer.from('locked/caf\xe9.txt', 'latin1'); // not UTF-8: shown as caf\xe9
    writeFileSync(Buffer.concat([Buffer.from(`${stage}/`), latin1]), 'x');
    writeFileSync(join(stage, 'a.txt'), 'a');
    writeFileSync(join(stage, 'n.txt'), 'n');
    writeFileSync(join(stage, 'z.txt'), 'z');
    const list = join(work, 'problems.list');
    writeFileSync(list, Buffer.concat([Buffer.from('a.txt\0'), latin1, Buffer.from('\0n.txt\0z.txt\0')]));
    const archive = join(work, 'problems.tar.zst');
    // n.txt stored under a 300-byte name, which no Linux file system takes.
    const tarArgs = [`--transform=s,^n.txt$,${'N'.repeat(300)},`, '--null', '-T', list];
    writeFileSync(archive, archiveWithTools(stage, tarArgs, ageRecipient));
    const dest = dir('dest');
    mkdirSync(join(dest, 'locked'), { recursive: true });
    execFileSync('chattr', ['+i', join(dest, 'locked')]); // immutable: even root cannot add a file there
    try {
      const result = await restoreCli(JOB, dest, '--archive', archive, '--key-file', keyFileOf(keyBase64));
      assert.equal(result.code, 4, result.stderr);
      const errorLines = lines(result.stderr);
      assert.deepEqual(errorLines, [
        'problem: locked/caf\\xe9.txt: not restored: operation not permitted (EPERM)',
        `problem: ${'N'.repeat(300)}: not restored: name too long (ENAMETOOLONG)`,
        `backupd: restored ${archive} into ${dest} with problems: 2 files restored, 2 entries with problems (listed above)`,
      ]);
      assert.deepEqual(readdirSync(dest).sort(), ['a.txt', 'locked', 'z.txt']);
      assert.deepEqual(readdirSync(join(dest, 'locked')), []);
    } finally {
      execFileSync('chattr', ['-i', join(dest, 'locked')]);
    }
  });

  test('a local archive that does not exist: exit 2 and one line naming it', async () => {
    const missing = join(work, 'no-such-archive.tar.zst');
    const result = await restoreCli(
      JOB,
      dir('dest'),
      '--archive',
      missing,
      '--key-file',
      keyFileOf(keyBase64),
    );
    assert.match(oneLineFailure(result, 2), /no-such-archive\.tar\.zst does not exist/);
  });
  describe('--key-file reads age identity files as `age -i` does', () => {
    const expected = /AGE-SECRET-KEY-1… lines.*key_base64/;

    test('comments, blank lines, CRLF and several keys: each is tried, a retired one first', async () => {
      const retired = generateScoutKey();
      const current = generateScoutKey();
      const keyFile = join(work, 'keys-with-comments.txt');
      const identity = (await scoutAdmin.get('/api/encryption-key')).body.age_identity as string;
      writeFileSync(
        keyFile,
        [
          '# created: 2026-01-01T00:00:00Z',
          `# public key: ${generateScoutKey().ageRecipient}`,
          retired.ageIdentity,
          '',
          '   ',
          `# the Scout key of ${scoutId}`,
          current.keyBase64,
          identity,
          identity,
          '',
        ].join('\r\n'),
      );
      const dest = dir('dest');
      const result = await restoreCli(JOB, dest, ...stationFlags(), '--key-file', keyFile);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(jobTree(dest), jobTree(source));
    });

    test('--key-file - reads standard input; the Scout’s own key file (bare key_base64) works', async () => {
      const fromStdin = dir('dest');
      const piped = await runBackupd(
        ['scout', 'restore', '--job', JOB, '--dest', fromStdin, ...stationFlags(), '--key-file', '-'],
        { env: ENV, input: `# piped\n${keyBase64}\n` },
      );
      assert.equal(piped.code, 0, piped.stderr);
      assert.deepEqual(jobTree(fromStdin), jobTree(source));
      const fromKeyFile = dir('dest');
      const own = await restoreCli(
        JOB,
        fromKeyFile,
        ...stationFlags(),
        '--key-file',
        join(scout.dataDir, 'scout-key'),
      );
      assert.equal(own.code, 0, own.stderr);
      assert.deepEqual(jobTree(fromKeyFile), jobTree(source));
    });

    test('a file with no usable key: one line naming the file and what was expected', async () => {
      const onlyComments = join(work, 'only-comments.txt');
      writeFileSync(onlyComments, '# nothing here\n\n# still nothing\n');
      const empty = oneLineFailure(
        await restoreCli(JOB, dir('dest'), ...stationFlags(), '--key-file', onlyComments),
        2,
      );
      assert.ok(empty.includes(onlyComments), empty);
      assert.match(empty, /holds no key/);
      assert.match(empty, expected);

      const recipientOnly = join(work, 'public-key.txt');
      const stranger = generateScoutKey();
      writeFileSync(recipientOnly, `# public key\n${stranger.ageRecipient}\n`);
      const wrongLine = oneLineFailure(
        await restoreCli(JOB, dir('dest'), ...stationFlags(), '--key-file', recipientOnly),
        2,
      );
      assert.ok(wrongLine.includes(`${recipientOnly}, line 2`), wrongLine);
      assert.match(wrongLine, /public key/);
      assert.match(wrongLine, expected);

      const damaged = join(work, 'damaged.txt');
      const secret = stranger.ageIdentity;
      writeFileSync(damaged, `${secret.slice(0, -1)}${secret.endsWith('Q') ? 'P' : 'Q'}\n`);
      const damagedLine = oneLineFailure(
        await restoreCli(JOB, dir('dest'), ...stationFlags(), '--key-file', damaged),
        2,
      );
      assert.match(damagedLine, /line 1: .*damaged/);
      assert.ok(!damagedLine.includes(secret.slice(20)), 'the key text is not echoed');

      const missing = join(work, 'no-such-key.txt');
      const absent = oneLineFailure(
        await restoreCli(JOB, dir('dest'), ...stationFlags(), '--key-file', missing),
        2,
      );
      assert.match(absent, /no-such-key\.txt does not exist/);
    });

    test('--key keeps working with an AGE-SECRET-KEY-1… identity', async () => {
      const identity = (await scoutAdmin.get('/api/encryption-key')).body.age_identity as string;
      const dest = dir('dest');
      const result = await restoreCli(JOB, dest, ...stationFlags(), '--key', identity);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(jobTree(dest), jobTree(source));
    });
  });

  test('a token not bound to the instance (403): the line says how to get one that is', async () => {
    const unbound = await mintStationToken(stationAdmin);
    const flags = stationFlags();
    flags[3] = unbound;
    const line = oneLineFailure(
      await restoreCli(JOB, dir('dest'), ...flags, '--key-file', keyFileOf(keyBase64)),
    );
    assert.ok(
      line.includes(
        `mint a recovery token for ${scoutId}/${instanceId} in the Station's dashboard (Instances → Mint a recovery token) or use the old host's token`,
      ),
      line,
    );
    assert.ok(!line.includes(unbound), 'the token is not echoed');
  });
});
