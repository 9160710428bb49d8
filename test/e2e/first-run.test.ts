// What a person sees first on a terminal: the servers' one plain line (stderr, only on a
// terminal: the `script` program gives the server one), `scout serve --help` naming SCAN_ROOT,
// a Scout whose scan root is missing saying what to do, and the bundle on a Node older than
// 22.15 refusing in one line instead of a stack trace (src/core/node-version.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { nodeTooOld } from '../../src/core/node-version.ts';
import { IN_CI } from '../helpers/programs.ts';
import { freePort, ROOT, runBackupd } from '../helpers/server.ts';

const BUNDLE = join(ROOT, 'dist/backupd.mjs');
const work = mkdtempSync(join(tmpdir(), 'backupd-first-run-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A Node older than 22.15 on this machine (Debian's system node), or undefined. */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version && nodeTooOld(version)) return candidate;
  }
  return undefined;
}

test('the oldest Node is 22.15', () => {
  assert.equal(nodeTooOld('20.20.2'), true);
  assert.equal(nodeTooOld('22.14.0'), true);
  assert.equal(nodeTooOld('22.15.0'), false);
  assert.equal(nodeTooOld('24.11.1'), false);
});

const old = oldNode();
test('on an old Node the bundle refuses in one line (exit 2), not with a stack trace', {
  skip: old === undefined ? 'no Node older than 22.15 on this machine' : false,
}, () => {
  assert.ok(existsSync(BUNDLE), 'dist/backupd.mjs is built');
  const result = spawnSync(old as string, [BUNDLE, '--help'], { encoding: 'utf8', cwd: work });
  assert.equal(result.status, 2, result.stderr);
  assert.match(
    result.stderr,
    /^backupd: needs Node ≥ 22\.15 \(Node 24 LTS recommended\); this is Node \d+\.\d+\.\d+\./,
  );
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /ERR_|at /);
});

test('scout serve --help names SCAN_ROOT', async () => {
  const result = await runBackupd(['scout', 'serve', '--help']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /SCAN_ROOT +the folder whose sub-folders are backed up \(default \/scan\)/);
});

/** Runs a Scout inside `script` (a terminal) until its first-run line appears; returns the output. */
async function onTerminal(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const command = `'${process.execPath}' '${join(ROOT, 'src/main.ts')}' scout serve --port ${port} --data-dir '${join(work, `scout-${port}`)}'`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  const deadline = Date.now() + 60_000;
  while (!output.includes('backupd Scout is running') && Date.now() < deadline && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return output;
}

test('on a terminal a Scout says where to sign in, and what to do about a missing scan root', {
  skip: spawnSync('script', ['-V']).error && !IN_CI ? 'script (util-linux) missing' : false,
}, async () => {
  const missing = join(work, 'no-such-scan-root');
  const output = await onTerminal({ SCAN_ROOT: missing });
  const line = output.split(/\r?\n/).find((l) => l.startsWith('backupd Scout is running'));
  assert.ok(line, output);
  assert.match(line, /open http:\/\/localhost:\d+ in a browser and sign in as admin/);
  assert.match(
    line,
    new RegExp(`the scan root ${missing} does not exist: start the Scout with SCAN_ROOT set`),
  );
});

test('without a terminal the output is the JSON log lines alone', async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(ROOT, 'src/main.ts'), 'scout', 'serve', '--port', String(port), '--data-dir', join(work, 'plain')],
    { env: { ...process.env, LOG_LEVEL: 'info', SCAN_ROOT: work }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const deadline = Date.now() + 60_000;
  while (!out.includes('scout listening') && Date.now() < deadline && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  assert.match(out, /scout listening/);
  for (const line of out.split('\n').filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
});
