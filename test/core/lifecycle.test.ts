// Process lifecycle: clean stop on signals, the data-dir lock, and recovery after kill -9.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ADMIN_PASSWORD, adminClient, Client } from '../helpers/http.ts';
import { freePort, type Role, runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const LOCK = 'backupd.lock';
const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

function track(server: TestServer): TestServer {
  cleanup.push(() => server.dispose());
  return server;
}

function lockPid(dataDir: string): number {
  return Number.parseInt(readFileSync(join(dataDir, LOCK), 'utf8'), 10);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A pid no process has right now. */
function deadPid(): number {
  for (let pid = 999_999; pid > 900_000; pid -= 7) if (!isAlive(pid)) return pid;
  throw new Error('no free pid found');
}

/** SIGTERM ends the server with 0; the bound only catches a hang, so it is generous. */
async function stopsCleanly(server: TestServer): Promise<void> {
  const started = Date.now();
  const code = await server.stop();
  const elapsed = Date.now() - started;
  assert.equal(code, 0, `exit code ${code}; output:\n${server.output().slice(-2000)}`);
  assert.ok(elapsed < 60_000, `stopped after ${elapsed} ms`);
  assert.equal(existsSync(join(server.dataDir, LOCK)), false, 'the lock file is removed');
}

/** Runs a second `serve` on a held data dir; it must exit at once with one line naming the holder. */
async function secondServeRefused(role: Role, server: TestServer): Promise<void> {
  const holder = lockPid(server.dataDir);
  assert.ok(isAlive(holder), 'the lock names the running server');
  const port = await freePort();
  // The bound catches a second serve that waits for the lock (a hang), not slowness: it is
  // generous, since a loaded machine took 8.2 s to start and refuse (speed belongs in the bench).
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    runBackupd([role, 'serve'], { env: { DATA_DIR: server.dataDir, PORT: String(port), HOST: '127.0.0.1' } }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('second serve did not exit within 90 s: it waits for the lock')),
        90_000,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  assert.notEqual(result.code, 0, 'exits non-zero');
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one stderr line, got:\n${result.stderr}`);
  assert.match(lines[0] ?? '', new RegExp(`\\b${holder}\\b`), 'the line names the holder pid');
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  // The running server keeps its lock and keeps answering.
  assert.equal(lockPid(server.dataDir), holder);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
}

describe('station', () => {
  test('lock, kill -9 and restart keep the data, SIGTERM stops cleanly', async () => {
    let station = track(await startServer('station'));
    assert.equal(lockPid(station.dataDir) > 0, true, 'serve writes a lock file with its pid');
    assert.match(station.output(), new RegExp(`"pid":${lockPid(station.dataDir)}\\b`));

    await secondServeRefused('station', station);

    const admin = await adminClient(station.url);
    const created = await admin.post('/api/users', { username: 'survivor', password: 'survivor-password' });
    assert.equal(created.status, 201, created.text);
    const settings = await admin.post('/api/settings', { retention_keep_last: 11 });
    assert.equal(settings.status, 200, settings.text);

    const killedPid = lockPid(station.dataDir);
    await station.kill();
    assert.equal(isAlive(killedPid), false);
    assert.equal(lockPid(station.dataDir), killedPid, 'kill -9 leaves a stale lock behind');

    station = await station.restart();
    cleanup.push(() => station.dispose());
    assert.notEqual(lockPid(station.dataDir), killedPid, 'the stale lock was taken over');

    const survivor = new Client(station.url);
    const login = await survivor.login('survivor', 'survivor-password');
    assert.equal(login.status, 200, `account created before kill -9 must survive: ${login.text}`);
    assert.equal(login.body.user.username, 'survivor');
    const again = new Client(station.url);
    assert.equal(
      (await again.login('admin', ADMIN_PASSWORD)).status,
      200,
      'the changed admin password survives',
    );
    const overview = await again.get('/api/overview?section=settings');
    assert.equal(overview.body.settings?.retention_keep_last, 11, 'settings survive kill -9');

    // A keep-alive connection from this client is open; SIGTERM must still stop promptly.
    await stopsCleanly(station);
    assert.match(station.output(), /stopped/);
  });
});

describe('scout', () => {
  test('a stale lock is taken over; a second serve is refused; SIGTERM stops cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backupd-scout-stale-'));
    const stale = deadPid();
    writeFileSync(join(dataDir, LOCK), `${stale}\n`);
    const scout = track(await startServer('scout', { dataDir }));
    const holder = lockPid(dataDir);
    assert.notEqual(holder, stale);
    assert.ok(isAlive(holder));

    await secondServeRefused('scout', scout);

    await adminClient(scout.url);
    await stopsCleanly(scout);
  });

  test('SIGINT stops cleanly too', async () => {
    const scout = track(await startServer('scout'));
    const pid = lockPid(scout.dataDir);
    process.kill(pid, 'SIGINT');
    // A bound against a hang, not a speed check (it stops in well under a second when idle).
    const deadline = Date.now() + 60_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(isAlive(pid), false, 'exited after SIGINT');
    assert.equal(await scout.stop(), 0);
    assert.equal(existsSync(join(scout.dataDir, LOCK)), false);
  });

  test('a lock file with garbage in it is taken over', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backupd-scout-garbage-'));
    writeFileSync(join(dataDir, LOCK), 'not a pid\n');
    const scout = track(await startServer('scout', { dataDir }));
    assert.ok(isAlive(lockPid(dataDir)));
    await stopsCleanly(scout);
  });
});

test('a lock file is never left behind when start-up fails', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backupd-station-badconf-'));
  cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const blocker = join(dataDir, 'not-a-folder');
  writeFileSync(blocker, 'x');
  const result = await runBackupd(['station', 'serve'], {
    env: {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      BACKUP_ROOT: join(blocker, 'snaps'),
    },
  });
  assert.notEqual(result.code, 0);
  assert.equal(result.stderr.trim().split('\n').length, 1, `one line, got:\n${result.stderr}`);
  assert.match(result.stderr, /not-a-folder/, 'the line names the path');
  assert.equal(existsSync(join(dataDir, LOCK)), false);
});
