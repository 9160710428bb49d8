// Issue #23 item 1: a data dir is its own user's only. A fresh Station (PGlite, its own initdb)
// and a fresh Scout, started under umask 022 in a folder every user can enter, leave nothing
// under the data dir that another user can read (as `nobody`: not scout.db, not the PGlite
// WAL); an existing data dir with 0666/0644 files is made private at start with one log line.
// Before: scout.db 0644 and PGlite's files 0666 in a 0755 data dir, all readable by `nobody`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, test } from 'node:test';
import { adminClient } from '../helpers/http.ts';
import { type Role, startServer, type TestServer } from '../helpers/server.ts';

const NOBODY = 65534;
const TIGHTENED = 'the data dir was open to other users of this host';

// The usual umask of a shell: what the data dir got before.
process.umask(0o022);
const work = mkdtempSync(join(tmpdir(), 'backupd-private-'));
// Every user can enter the folder that holds the data dirs, as ./data or /srv would allow.
chmodSync(work, 0o755);
const scanRoot = join(work, 'scan');
mkdirSync(scanRoot);

/** Every entry under `dir` (itself included) with a group or other permission bit: "path mode". */
function openEntries(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stats = lstatSync(path);
    if (stats.isSymbolicLink()) return;
    if ((stats.mode & 0o077) !== 0)
      found.push(`${relative(dir, path) || '.'} ${(stats.mode & 0o7777).toString(8)}`);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

/** Opens up everything under `dir` as a umask of 0 would have: files 0666, folders 0777. */
function loosen(dir: string): void {
  const stats = lstatSync(dir);
  if (stats.isSymbolicLink()) return;
  chmodSync(dir, stats.isDirectory() ? 0o777 : 0o666);
  if (stats.isDirectory()) for (const name of readdirSync(dir)) loosen(join(dir, name));
}

/** Whether user `nobody` can read the file (cat as uid/gid 65534). */
function nobodyReads(path: string): boolean {
  return spawnSync('cat', [path], { uid: NOBODY, gid: NOBODY, stdio: 'ignore' }).status === 0;
}

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.dispose();
  rmSync(work, { recursive: true, force: true });
});

/** A role on a data dir that does not exist yet, inside the open `work` folder. */
async function fresh(role: Role): Promise<TestServer> {
  const server = await startServer(role, {
    dataDir: join(work, role),
    freshCluster: true,
    env: role === 'scout' ? { SCAN_ROOT: scanRoot } : {},
  });
  servers.push(server);
  // Writes to the database: a sign-in (session row) and a password change.
  await adminClient(server.url);
  return server;
}

describe('data dirs are private to their user (issue #23 item 1)', () => {
  const secretFiles: Record<Role, string[]> = {
    station: ['pgdata/pg_wal/000000010000000000000001', 'pgdata/global/pg_control'],
    scout: ['scout.db', 'scout.db-wal', 'scout-key'],
  };

  for (const role of ['station', 'scout'] as const) {
    test(`${role}: a fresh data dir under umask 022 holds nothing another user can read, and a loosened one is tightened at start with one log line`, async () => {
      let server = await fresh(role);
      assert.deepEqual(openEntries(server.dataDir), [], 'no entry has group or other permissions');
      assert.equal(occurrences(server.output(), TIGHTENED), 0, 'a fresh data dir needs no tightening');
      for (const file of secretFiles[role]) {
        assert.ok(lstatSync(join(server.dataDir, file)).isFile(), `${file} exists`);
        assert.equal(nobodyReads(join(server.dataDir, file)), false, `nobody cannot read ${file}`);
      }

      await server.stop();
      loosen(server.dataDir);
      assert.equal(
        nobodyReads(join(server.dataDir, secretFiles[role][0] as string)),
        true,
        'the test opened it up',
      );
      server = await server.restart();
      servers.push(server);
      assert.equal(
        occurrences(server.output(), TIGHTENED),
        1,
        'exactly one log line says what was tightened',
      );
      const line =
        server
          .output()
          .split('\n')
          .find((l) => l.includes(TIGHTENED)) ?? '';
      assert.match(line, /"count":\d+/);
      assert.deepEqual(openEntries(server.dataDir), [], 'every entry is private again');
      for (const file of secretFiles[role]) {
        assert.equal(nobodyReads(join(server.dataDir, file)), false, `nobody cannot read ${file}`);
      }
    });
  }

  test('the Scout leaves the scan root as it is when it lies inside the data dir', async () => {
    const dataDir = join(work, 'scout-with-scan');
    const inside = join(dataDir, 'scan');
    mkdirSync(join(inside, 'docs'), { recursive: true });
    chmodSync(dataDir, 0o755);
    chmodSync(join(inside, 'docs'), 0o755);
    const server = await startServer('scout', { dataDir, env: { SCAN_ROOT: inside } });
    servers.push(server);
    assert.equal(lstatSync(join(inside, 'docs')).mode & 0o777, 0o755, 'the scan root keeps its modes');
    assert.equal(lstatSync(dataDir).mode & 0o777, 0o700, 'the data dir itself is private');
  });
});
