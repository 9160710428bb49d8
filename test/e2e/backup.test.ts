// A real Station and a real Scout: marked folders backed up by run-now, fetched back through
// the Station's recovery API and opened with the `age`, `zstd` and `tar` programs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminClient, type Client } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const hasPrograms = ['age', 'zstd', 'tar'].every((p) => {
  try {
    execFileSync('which', [p]);
    return true;
  } catch {
    return false;
  }
});
const skip = !hasPrograms && process.env.CI !== 'true' ? 'age, zstd or tar missing' : false;

let station: TestServer;
let scout: TestServer;
let stationAdmin: Client;
let scoutAdmin: Client;
let credential: string;
let scanRoot: string;
const work = mkdtempSync(join(tmpdir(), 'backupd-e2e-'));

async function waitIdle(): Promise<any> {
  for (let i = 0; i < 600; i += 1) {
    const status = await scoutAdmin.get('/api/status');
    if (status.body.operation === null && !status.body.run_now_requested) return status.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the Scout did not become idle');
}

async function runNow(): Promise<void> {
  const reply = await scoutAdmin.post('/api/run-now');
  assert.equal(reply.status, 200);
  assert.equal(reply.body.status, 'queued');
  await waitIdle();
}

async function jobState(relativePath: string) {
  const list = await scoutAdmin.get('/api/directories');
  return list.body.directories.find((d: any) => d.relative_path === relativePath);
}

async function snapshotsOf(job: string): Promise<string[]> {
  const overview = await stationAdmin.get('/api/overview?section=snapshots');
  const names: string[] = [];
  for (const s of overview.body.scouts) {
    for (const i of s.instances)
      for (const j of i.jobs) if (j.job_name === job) names.push(...j.snapshots.map((x: any) => x.name));
  }
  return names;
}

/** Downloads the latest snapshot through the recovery API and unpacks it with age | zstd | tar. */
async function restoreWithStandardTools(job: string, into: string): Promise<void> {
  const status = await scoutAdmin.get('/api/status');
  const key = await scoutAdmin.get('/api/encryption-key');
  const res = await fetch(
    `${station.url}/backup/recovery/${status.body.scout_id}/${status.body.scout_instance_id}/${job}/latest`,
    { headers: { authorization: `Bearer ${credential}` } },
  );
  assert.equal(res.status, 200);
  const archive = join(work, `${job}.tar.zst`);
  writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
  writeFileSync(join(work, 'key.txt'), `${key.body.age_identity}\n`);
  mkdirSync(into, { recursive: true });
  execFileSync('sh', [
    '-c',
    'age -d -i "$1" "$2" | zstd -d | tar -x -C "$3"',
    'sh',
    join(work, 'key.txt'),
    archive,
    into,
  ]);
}

describe('backup end to end', { skip }, () => {
  before(async () => {
    station = await startServer('station');
    stationAdmin = await adminClient(station.url);
    credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const scoutData = mkdtempSync(join(tmpdir(), 'backupd-scout-'));
    scanRoot = join(scoutData, 'scan');
    mkdirSync(join(scanRoot, 'docs', 'sub', 'empty'), { recursive: true });
    writeFileSync(join(scanRoot, 'docs', '.upload_dir'), '');
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'alpha');
    writeFileSync(join(scanRoot, 'docs', 'sub', 'b.bin'), Buffer.alloc(200_000, 3));
    mkdirSync(join(scanRoot, 'photos'), { recursive: true });
    writeFileSync(join(scanRoot, 'photos', '.upload_dir'), 'job_name: pictures\nexclude:\n  - "*.tmp"\n');
    writeFileSync(join(scanRoot, 'photos', 'p1.jpg'), Buffer.alloc(50_000, 9));
    writeFileSync(join(scanRoot, 'photos', 'scratch.tmp'), 'left out');
    scout = await startServer('scout', { dataDir: scoutData, env: { SCAN_ROOT: scanRoot } });
    scoutAdmin = await adminClient(scout.url);
    const saved = await scoutAdmin.post('/api/settings', {
      station_url: station.url,
      scout_credential: credential,
      scout_id: 'e2e-host',
    });
    assert.equal(saved.status, 200, saved.text);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('run-now backs up every marked folder; age | zstd | tar restores them', async () => {
    await runNow();
    const docs = await jobState('docs');
    assert.equal(docs.state.last_status, 'uploaded', docs.state.last_error);
    assert.equal((await jobState('photos')).state.last_status, 'uploaded');
    assert.equal((await snapshotsOf('docs')).length, 1);
    assert.equal((await snapshotsOf('pictures')).length, 1);
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
    await runNow();
    assert.equal((await jobState('docs')).state.last_status, 'unchanged');
    assert.equal((await snapshotsOf('docs')).length, 1);
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'alpha, longer');
    await runNow();
    assert.equal((await jobState('docs')).state.last_status, 'uploaded');
    assert.equal((await snapshotsOf('docs')).length, 2);
  });

  test('a same-size edit is uploaded only through force-send', async () => {
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'ALPHA, LONGER');
    await runNow();
    assert.equal((await jobState('docs')).state.last_status, 'unchanged');
    assert.equal((await snapshotsOf('docs')).length, 2);
    const forced = await scoutAdmin.post('/api/directories/force-send', { relative_path: 'docs' });
    assert.equal(forced.body.status, 'queued');
    await waitIdle();
    assert.equal((await jobState('docs')).state.last_status, 'uploaded');
    assert.equal((await snapshotsOf('docs')).length, 3);
    const out = join(work, 'docs-forced');
    await restoreWithStandardTools('docs', out);
    assert.equal(readFileSync(join(out, 'a.txt'), 'utf8'), 'ALPHA, LONGER');
  });

  test('with Station uploads paused the job fails, keeps its archive, and uploads after resume', async () => {
    assert.equal((await stationAdmin.post('/api/admin/uploads/pause')).status, 200);
    writeFileSync(join(scanRoot, 'docs', 'c.txt'), 'new file');
    await runNow();
    const failed = await jobState('docs');
    assert.equal(failed.state.last_status, 'failed');
    assert.match(failed.state.last_error, /stays staged/);
    assert.equal(failed.state.staged, true);
    assert.equal((await snapshotsOf('docs')).length, 3);
    assert.equal((await stationAdmin.post('/api/admin/uploads/resume')).status, 200);
    await runNow();
    const done = await jobState('docs');
    assert.equal(done.state.last_status, 'uploaded', done.state.last_error);
    assert.equal(done.state.staged, false);
    assert.equal((await snapshotsOf('docs')).length, 4);
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
    const interrupted = await jobState('big');
    assert.equal(interrupted.state.staged, true);
    await runNow();
    const done = await jobState('big');
    assert.equal(done.state.last_status, 'uploaded', done.state.last_error);
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
