// `backupd scout restore`: the disaster-recovery path without a running Scout service. A real
// Station and Scout make a snapshot; the CLI (run from source) restores it from the Station,
// from the Scout's data dir, or from a local archive, and refuses what it must refuse with
// one line on stderr.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
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
import { after, before, describe, test } from 'node:test';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const hasPrograms = ['age', 'zstd', 'tar'].every((p) => {
  try {
    execFileSync('which', [p]);
    return true;
  } catch {
    return false;
  }
});
const skip = !hasPrograms && process.env.CI !== 'true' ? 'age, zstd or tar missing' : false;

const JOB = 'cli-job';
// No Station settings leak in from the environment.
const ENV = { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' };

interface Node {
  type: string;
  mode: number;
  mtime: number;
  content?: string;
  target?: string;
}

/** Everything under `dir` except the job marker: contents, link targets, modes, file mtimes. */
function tree(dir: string): Record<string, Node> {
  const out: Record<string, Node> = {};
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.upload_dir') continue;
      const a = join(abs, name);
      const s = lstatSync(a);
      const type = s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : 'file';
      const node: Node = {
        type,
        mode: type === 'symlink' ? 0 : s.mode & 0o7777,
        mtime: type === 'file' ? Math.floor(s.mtimeMs / 1000) : 0,
      };
      if (type === 'file') node.content = readFileSync(a).toString('base64');
      if (type === 'symlink') node.target = readlinkSync(a);
      out[r] = node;
      if (type === 'dir') walk(a, r);
    }
  };
  walk(dir, '');
  return out;
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** Non-zero exit and exactly one line on stderr; returns that line. */
function oneLineFailure(result: { code: number | null; stdout: string; stderr: string }): string {
  assert.notEqual(result.code, 0, `expected a failure; stdout: ${result.stdout}`);
  assert.notEqual(result.code, null);
  const errorLines = lines(result.stderr);
  assert.equal(errorLines.length, 1, `exactly one line on stderr, got:\n${result.stderr}`);
  return errorLines[0] ?? '';
}

describe('backupd scout restore', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let scoutAdmin: Client;
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
    station = await startServer('station');
    const stationAdmin = await adminClient(station.url);
    credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const data = mkdtempSync(join(tmpdir(), 'backupd-scout-'));
    source = join(data, 'scan', JOB);
    mkdirSync(join(source, 'sub', 'empty'), { recursive: true });
    mkdirSync(join(source, 'private'));
    writeFileSync(join(source, '.upload_dir'), '');
    writeFileSync(join(source, 'readme.txt'), 'hello from the snapshot\n');
    writeFileSync(join(source, '.hidden'), 'dotfiles are data too');
    writeFileSync(join(source, 'sub', 'run.sh'), '#!/bin/sh\necho run\n');
    writeFileSync(
      join(source, 'sub', 'blob.bin'),
      Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 253)),
    );
    writeFileSync(join(source, 'private', 'secret.txt'), 'shh');
    symlinkSync('../readme.txt', join(source, 'sub', 'readme-link'));
    chmodSync(join(source, 'sub', 'run.sh'), 0o755);
    chmodSync(join(source, 'private', 'secret.txt'), 0o600);
    chmodSync(join(source, 'private'), 0o700);
    chmodSync(join(source, 'readme.txt'), 0o644);
    utimesSync(join(source, 'readme.txt'), 1_600_000_000, 1_600_000_000);
    utimesSync(join(source, 'sub', 'run.sh'), 1_500_000_000, 1_500_000_000);
    scout = await startServer('scout', { dataDir: data });
    scoutAdmin = await adminClient(scout.url);
    const saved = await scoutAdmin.post('/api/settings', {
      station_url: station.url,
      scout_credential: credential,
      scout_id: 'cli-host',
    });
    assert.equal(saved.status, 200, saved.text);
    assert.equal((await scoutAdmin.post('/api/run-now')).body.status, 'queued');
    for (let i = 0; i < 600; i += 1) {
      const status = await scoutAdmin.get('/api/status');
      if (status.body.operation === null && !status.body.run_now_requested) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const dirs = await scoutAdmin.get('/api/directories');
    const state = dirs.body.directories.find(
      (d: { relative_path: string }) => d.relative_path === JOB,
    )?.state;
    assert.equal(state?.last_status, 'uploaded', state?.last_error);
    snapshot = state.last_stored_as;
    const status = await scoutAdmin.get('/api/status');
    scoutId = status.body.scout_id;
    instanceId = status.body.scout_instance_id;
    const key = await scoutAdmin.get('/api/encryption-key');
    keyBase64 = key.body.key_base64;
    ageRecipient = key.body.age_recipient;
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('from the Station with explicit flags: a byte-identical tree and a summary on stdout', async () => {
    const dest = dir('dest');
    mkdirSync(dest, { recursive: true });
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, ...stationFlags(), '--key', keyBase64],
      { env: ENV },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(tree(dest), tree(source));
    const summary = lines(result.stdout);
    assert.ok(summary.length >= 1, 'a summary on stdout');
    assert.match(result.stdout, new RegExp(snapshot.replace(/\./g, '\\.')));
    assert.match(result.stdout, /5 added/);
    assert.match(result.stdout, /0 replaced/);
  });

  test('--data-dir alone: key, settings and instance ID come from the Scout’s data dir', async () => {
    const dest = dir('dest');
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, '--data-dir', scout.dataDir],
      { env: ENV },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(tree(dest), tree(source));
  });

  test('--fingerprint and --file pick the snapshot', async () => {
    const fp8 = snapshot.split('__')[2]?.slice(0, 8) ?? '';
    const byFp = dir('dest');
    const one = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', byFp, '--data-dir', scout.dataDir, '--fingerprint', fp8],
      { env: ENV },
    );
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(tree(byFp), tree(source));
    const byFile = dir('dest');
    const two = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', byFile, '--data-dir', scout.dataDir, '--file', snapshot],
      { env: ENV },
    );
    assert.equal(two.code, 0, two.stderr);
    assert.deepEqual(tree(byFile), tree(source));
    const bad = await runBackupd(
      [
        'scout',
        'restore',
        '--job',
        JOB,
        '--dest',
        dir('dest'),
        '--data-dir',
        scout.dataDir,
        '--fingerprint',
        'XYZ',
      ],
      { env: ENV },
    );
    oneLineFailure(bad);
  });

  test('--dry-run lists add and replace lines and writes nothing', async () => {
    const dest = dir('dest');
    mkdirSync(dest, { recursive: true });
    writeFileSync(join(dest, 'readme.txt'), 'local copy');
    const before = tree(dest);
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, ...stationFlags(), '--key', keyBase64, '--dry-run'],
      { env: ENV },
    );
    assert.equal(result.code, 0, result.stderr);
    const out = lines(result.stdout);
    const adds = out.filter((l) => l.startsWith('add ')).sort();
    const replaces = out.filter((l) => l.startsWith('replace ')).sort();
    assert.deepEqual(adds, ['add .hidden', 'add private/secret.txt', 'add sub/blob.bin', 'add sub/run.sh']);
    assert.deepEqual(replaces, ['replace readme.txt']);
    assert.deepEqual(tree(dest), before, 'nothing written');
    const fresh = dir('dest');
    const none = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', fresh, ...stationFlags(), '--key', keyBase64, '--dry-run'],
      { env: ENV },
    );
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
    const result = await runBackupd(
      [
        'scout',
        'restore',
        '--job',
        JOB,
        '--dest',
        dest,
        '--archive',
        archive,
        '--key-file',
        keyFile,
        '--station-url',
        'http://127.0.0.1:9', // never contacted
      ],
      { env: ENV },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(tree(dest), tree(source));
  });

  test('a wrong key: non-zero exit and one line on stderr', async () => {
    const dest = dir('dest');
    const result = await runBackupd(
      [
        'scout',
        'restore',
        '--job',
        JOB,
        '--dest',
        dest,
        ...stationFlags(),
        '--key',
        generateScoutKey().keyBase64,
      ],
      { env: ENV },
    );
    const line = oneLineFailure(result);
    assert.match(line, /key/i);
    const written = existsSync(dest) ? readdirSync(dest) : [];
    assert.deepEqual(written, [], 'nothing restored');
  });

  test('a missing snapshot (unknown job): non-zero exit and one line', async () => {
    const result = await runBackupd(
      [
        'scout',
        'restore',
        '--job',
        'no-such-job',
        '--dest',
        dir('dest'),
        ...stationFlags(),
        '--key',
        keyBase64,
      ],
      { env: ENV },
    );
    const line = oneLineFailure(result);
    assert.match(line, /snapshot|not found|no-such-job/i);
  });

  test('a bad token: non-zero exit and one line', async () => {
    const flags = stationFlags();
    flags[3] = 'not-a-valid-station-token';
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dir('dest'), ...flags, '--key', keyBase64],
      { env: ENV },
    );
    const line = oneLineFailure(result);
    assert.match(line, /token|401|unauthori|sign/i);
  });

  test('a hostile local archive (absolute path entry): non-zero exit and one line naming the entry', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    const stage = join(work, 'stage');
    mkdirSync(stage, { recursive: true });
    writeFileSync(join(stage, 'pwned.txt'), 'pwned');
    const target = `${outside}/pwned.txt`;
    const archive = join(work, 'hostile.tar.zst');
    execFileSync(
      'sh',
      [
        '-c',
        'tar --format=posix -P --transform="s,^pwned.txt,$1," -cf - pwned.txt | zstd -q | age -r "$0" > "$2"',
        ageRecipient,
        target,
        archive,
      ],
      { cwd: stage, stdio: ['ignore', 'ignore', 'ignore'] },
    );
    const dest = dir('dest');
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, '--archive', archive, '--key', keyBase64],
      { env: ENV },
    );
    const line = oneLineFailure(result);
    assert.ok(line.includes(target), `the line names the entry: ${line}`);
    assert.match(line, /unsafe|absolute/i);
    assert.deepEqual(readdirSync(outside), [], 'nothing written outside');
    rmSync(outside, { recursive: true, force: true });
  });
});
