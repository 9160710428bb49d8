// The single executable (dist/backupd, built by `npm run build`): copied into an empty
// folder and run with a PATH that has no `node`, a Station and a Scout started from it make
// a backup, and `backupd scout restore` from it brings the job back byte for byte.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTree, jobTree } from '../helpers/files.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { IN_CI } from '../helpers/programs.ts';
import { backupJob, connectScout, scoutStatus } from '../helpers/scout.ts';
import { ROOT, runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const BUILT = join(ROOT, 'dist', 'backupd');
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
const skip = !linuxX64 ? 'the single executable is built for linux-x64 only' : false;
const JOB = 'photos';

describe('dist/backupd, the single executable', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'backupd-sea-'));
  const bin = join(work, 'bin');
  const executable = join(bin, 'backupd');
  // A PATH with no node on it: an empty folder.
  const emptyPath = join(work, 'empty-path');
  const env = { PATH: emptyPath, STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' };
  let station: TestServer;
  let scout: TestServer;
  let scoutAdmin: Client;
  let source: string;

  before(async () => {
    assert.ok(existsSync(BUILT) || !IN_CI, 'npm run build writes dist/backupd');
    mkdirSync(bin);
    mkdirSync(emptyPath);
    copyFileSync(BUILT, executable);
    const scoutData = join(work, 'scout');
    source = buildTree(join(scoutData, 'scan', JOB), {
      '.upload_dir': '',
      'a.txt': 'from the single executable\n',
      'nested/b.bin': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256)),
      'nested/empty/': null,
    });
    [station, scout] = await Promise.all([
      startServer('station', { executable, env, dataDir: join(work, 'station'), cwd: bin }),
      startServer('scout', { executable, env, dataDir: scoutData, cwd: bin }),
    ]);
    scoutAdmin = await adminClient(scout.url);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('runs without node: --version names the version, the commit and the platform', async () => {
    const result = await runBackupd(['--version'], { executable, env, cwd: work });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^backupd \d+\.\d+\.\d+ \([0-9a-f]{7,}\) linux-x64$/m);
  });

  test('a Station on the embedded database and a Scout make a backup; scout restore brings it back', async () => {
    const stationAdmin = await adminClient(station.url);
    await connectScout(scoutAdmin, stationAdmin, 'sea-host');
    const stored = await backupJob(scoutAdmin, JOB);
    const status = await scoutStatus(scoutAdmin);
    // The web UI is inside too.
    const page = await fetch(`${station.url}/`);
    assert.match(await page.text(), /<div id="app">/);

    const dest = join(work, 'restored');
    mkdirSync(dest);
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, '--data-dir', scout.dataDir],
      { executable, env, cwd: work },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(stored.replace(/\./g, '\\.')));
    assert.deepEqual(jobTree(dest), jobTree(source));
    assert.ok(status.scout_id);
    assert.deepEqual(readdirSync(bin), ['backupd'], 'nothing written beside the executable');
  });
});
