// A real Station and a real Scout: marked folders backed up by run-now, fetched back through
// the Station's recovery API and opened with the `age`, `zstd` and `tar` programs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unpackWithTools } from '../helpers/archives.ts';
import { buildTree } from '../helpers/files.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import {
  connectScout,
  jobState,
  runNow,
  snapshotsOf,
  startScout,
  startStation,
  waitIdle,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);

let station: TestServer;
let scout: TestServer;
let stationAdmin: Client;
let scoutAdmin: Client;
let credential: string;
let scanRoot: string;
const work = mkdtempSync(join(tmpdir(), 'backupd-e2e-'));

/** Downloads the latest snapshot through the recovery API and unpacks it with age | zstd | tar. */
async function restoreWithStandardTools(job: string, into: string): Promise<void> {
  const status = await scoutAdmin.get('/api/status');
  const key = await scoutAdmin.get('/api/encryption-key');
  const res = await fetch(
    `${station.url}/backup/recovery/${status.body.scout_id}/${status.body.scout_instance_id}/${job}/latest`,
    { headers: { authorization: `Bearer ${credential}` } },
  );
  assert.equal(res.status, 200);
  unpackWithTools(Buffer.from(await res.arrayBuffer()), key.body.age_identity, into);
}

describe('backup end to end', { skip }, () => {
  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    ({
      server: scout,
      admin: scoutAdmin,
      scanRoot,
    } = await startScout({
      fill: (scan) =>
        buildTree(scan, {
          'docs/sub/empty/': '',
          'docs/.upload_dir': '',
          'docs/a.txt': 'alpha',
          'docs/sub/b.bin': Buffer.alloc(200_000, 3),
          'photos/.upload_dir': 'job_name: pictures\nexclude:\n  - "*.tmp"\n',
          'photos/p1.jpg': Buffer.alloc(50_000, 9),
          'photos/scratch.tmp': 'left out',
        }),
    }));
    credential = await connectScout(scoutAdmin, stationAdmin, 'e2e-host');
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('run-now backs up every marked folder; age | zstd | tar restores them', async () => {
    await runNow(scoutAdmin);
    const docs = await jobState(scoutAdmin, 'docs');
    assert.equal(docs.last_status, 'uploaded', docs.last_error ?? undefined);
    assert.equal((await jobState(scoutAdmin, 'photos')).last_status, 'uploaded');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 1);
    assert.equal((await snapshotsOf(stationAdmin, 'pictures')).length, 1);
    const out = join(work, 'docs-restored');
    await restoreWithStandardTools('docs', out);
    assert.equal(readFileSync(join(out, 'a.txt'), 'utf8'), 'alpha');
    assert.deepEqual(readFileSync(join(out, 'sub', 'b.bin')), Buffer.alloc(200_000, 3));
    execFileSync('test', ['-d', join(out, 'sub', 'empty')]);
    const pics = join(work, 'pictures-restored');
    await restoreWithStandardTools('pictures', pics);
    assert.deepEqual(readFileSync(join(pics, 'p1.jpg')), Buffer.alloc(50_000, 9));
    assert.throws(() => readFileSync(join(pics, 'scratch.tmp')), 'excluded files stay out');
  });

  test('an unchanged job makes no new snapshot; a size change makes one', async () => {
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 1);
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'alpha, longer');
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'uploaded');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2);
  });

  test('a same-size edit is uploaded only through force-send', async () => {
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'ALPHA, LONGER');
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2);
    const forced = await scoutAdmin.post('/api/directories/force-send', { relative_path: 'docs' });
    assert.equal(forced.body.status, 'queued');
    await waitIdle(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'uploaded');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 3);
    const out = join(work, 'docs-forced');
    await restoreWithStandardTools('docs', out);
    assert.equal(readFileSync(join(out, 'a.txt'), 'utf8'), 'ALPHA, LONGER');
  });

  test('with Station uploads paused the job fails, keeps its archive, and uploads after resume', async () => {
    assert.equal((await stationAdmin.post('/api/admin/uploads/pause')).status, 200);
    writeFileSync(join(scanRoot, 'docs', 'c.txt'), 'new file');
    await runNow(scoutAdmin);
    const failed = await jobState(scoutAdmin, 'docs');
    assert.equal(failed.last_status, 'failed');
    assert.match(String(failed.last_error), /stays staged/);
    assert.equal(failed.staged, true);
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 3);
    assert.equal((await stationAdmin.post('/api/admin/uploads/resume')).status, 200);
    await runNow(scoutAdmin);
    const done = await jobState(scoutAdmin, 'docs');
    assert.equal(done.last_status, 'uploaded', done.last_error ?? undefined);
    assert.equal(done.staged, false);
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 4);
  });

  test('a Scout killed mid-upload resumes its staged archive without re-archiving', async () => {
    mkdirSync(join(scanRoot, 'big'), { recursive: true });
    writeFileSync(join(scanRoot, 'big', '.upload_dir'), '');
    writeFileSync(join(scanRoot, 'big', 'noise.bin'), randomBytes(48 * 1024 * 1024));
    assert.equal((await scoutAdmin.post('/api/run-now')).body.status, 'queued');
    let phase = '';
    for (let i = 0; i < 2000 && phase !== 'uploading'; i += 1) {
      const status = await scoutAdmin.get('/api/status');
      phase = status.body.operation?.job_name === 'big' ? status.body.operation.phase : '';
      if (phase !== 'uploading') await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(phase, 'uploading', 'the upload of the big job was seen running');
    await scout.kill();
    const stagingDir = join(scout.dataDir, 'staging');
    const staged = readdirSync(stagingDir).filter((f) => f.startsWith('big-') && f.endsWith('.tar.zst'));
    assert.equal(staged.length, 1, 'one complete staged archive survives the kill');
    const stagedBytes = readFileSync(join(stagingDir, staged[0] ?? ''));
    scout = await scout.restart();
    scoutAdmin = await adminClient(scout.url);
    const interrupted = await jobState(scoutAdmin, 'big');
    assert.equal(interrupted.staged, true);
    await runNow(scoutAdmin);
    const done = await jobState(scoutAdmin, 'big');
    assert.equal(done.last_status, 'uploaded', done.last_error ?? undefined);
    const status = await scoutAdmin.get('/api/status');
    const res = await fetch(
      `${station.url}/backup/recovery/${status.body.scout_id}/${status.body.scout_instance_id}/big/latest`,
      { headers: { authorization: `Bearer ${credential}` } },
    );
    const stored = Buffer.from(await res.arrayBuffer());
    assert.ok(stored.equals(stagedBytes), 'the Station holds exactly the archive staged before the kill');
    assert.deepEqual(
      readdirSync(stagingDir).filter((f) => f.startsWith('big-')),
      [],
      'the staged archive is gone once stored',
    );
  });
});
