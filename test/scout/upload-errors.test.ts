// How a Scout reports a Station that refuses or cannot take its upload (a real Station and
// a real Scout): a revoked Station token, a token bound to another instance, an archive over
// MAX_UPLOAD_BYTES and an unreachable Station, which opens the upload circuit after three
// cycles; run-now against the right address closes it and uploads the staged archive.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminClient, type Client, type Reply } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { archiveMeta, initiate } from '../helpers/uploads.ts';

const MAX_UPLOAD_BYTES = 300_000;
const SCOUT_ID = 'err-host';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

let station: TestServer;
let scout: TestServer;
let stationAdmin: Client;
let scoutAdmin: Client;
let scanRoot: string;
let credential = '';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectStatus(reply: Reply, status: number): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
}

async function mint(): Promise<string> {
  const reply = await stationAdmin.post('/api/credentials/mint', {});
  expectStatus(reply, 201);
  return reply.body.credential;
}

async function useStation(stationUrl: string, token: string): Promise<void> {
  const reply = await scoutAdmin.post('/api/settings', {
    station_url: stationUrl,
    scout_credential: token,
    scout_id: SCOUT_ID,
  });
  expectStatus(reply, 200);
  assert.equal(reply.body.settings?.station_url, stationUrl);
}

/** The parts of GET /api/status these tests read (CONTRACT.md, Scout fields). */
interface Status {
  scout_id: string;
  scout_instance_id: string;
  settings?: {
    station_url: string | null;
    scout_id: string;
    scout_credential: string | null;
    cron_schedule: string;
  };
  key_fingerprint: string;
  uploads_paused: boolean;
  upload_circuit: { state: string; consecutive_failures: number; retry_at: string | null };
  run_now_requested: boolean;
  scheduler: {
    state: string;
    cron_schedule: string;
    next_run_at: string;
    last_started_at: string | null;
    last_finished_at: string | null;
  };
  operation: {
    kind: string;
    job_name: string | null;
    phase: string;
    bytes_done: number;
    bytes_total: number;
    started_at: string;
  } | null;
}

interface JobState {
  last_status: string;
  last_error: string | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_stored_as: string | null;
  staged: boolean;
}

async function scoutStatus(): Promise<Status> {
  const reply = await scoutAdmin.get<Status>('/api/status');
  expectStatus(reply, 200);
  return reply.body;
}

async function runNow(): Promise<Status> {
  const reply = await scoutAdmin.post('/api/run-now');
  expectStatus(reply, 200);
  assert.equal(reply.body.status, 'queued');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const status = await scoutStatus();
    if (status.operation === null && !status.run_now_requested) return status;
    await sleep(50);
  }
  throw new Error('the cycle did not end in 30 s');
}

async function jobState(relativePath: string): Promise<JobState> {
  const list = await scoutAdmin.get<{ directories: Array<{ relative_path: string; state: JobState }> }>(
    '/api/directories',
  );
  expectStatus(list, 200);
  const found = list.body.directories.find((d) => d.relative_path === relativePath);
  assert.ok(found, `${relativePath} is listed`);
  return found.state;
}

async function snapshotsOf(job: string): Promise<string[]> {
  const overview = await stationAdmin.get('/api/overview?section=snapshots');
  expectStatus(overview, 200);
  const names: string[] = [];
  for (const s of overview.body.scouts) {
    if (s.scout_id !== SCOUT_ID) continue;
    for (const i of s.instances)
      for (const j of i.jobs)
        if (j.job_name === job) names.push(...j.snapshots.map((x: { name: string }) => x.name));
  }
  return names;
}

before(async () => {
  station = await startServer('station', { env: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) } });
  stationAdmin = await adminClient(station.url);
  const scoutData = mkdtempSync(join(tmpdir(), 'backupd-scout-'));
  scanRoot = join(scoutData, 'scan');
  mkdirSync(join(scanRoot, 'small'), { recursive: true });
  writeFileSync(join(scanRoot, 'small', '.upload_dir'), '');
  writeFileSync(join(scanRoot, 'small', 'a.txt'), 'alpha');
  scout = await startServer('scout', { dataDir: scoutData });
  scoutAdmin = await adminClient(scout.url);
});

after(async () => {
  await scout?.dispose();
  await station?.dispose();
});

describe('upload refusals', () => {
  test('a revoked Station token: failed, says to mint a new token as scout_credential, archive staged', async () => {
    const revoked = await mint();
    const hash = createHash('sha256').update(revoked).digest('hex');
    expectStatus(await stationAdmin.delete(`/api/credentials/${hash}`), 200);
    await useStation(station.url, revoked);
    const status = await runNow();
    const state = await jobState('small');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /mint a new/i);
    assert.match(String(state.last_error), /scout_credential/);
    assert.equal(state.staged, true);
    assert.equal(state.last_stored_as, null);
    assert.equal(status.upload_circuit.state, 'closed', 'the Station was reached');
    assert.equal(status.upload_circuit.consecutive_failures, 0);
  });

  test('a token bound to another instance: failed with a message about the instance', async () => {
    const taken = await mint();
    const bound = await initiate(
      station.url,
      taken,
      archiveMeta(Buffer.from('someone else'), {
        scout_id: 'other-host',
        scout_instance_id: '0123456789abcdef0123',
        job_name: 'theirs',
      }),
    );
    assert.equal(bound.status, 200, JSON.stringify(bound.body));
    await useStation(station.url, taken);
    await runNow();
    const state = await jobState('small');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /instance/);
    assert.match(String(state.last_error), /mint/i);
    assert.equal(state.staged, true);
    assert.deepEqual(await snapshotsOf('small'), []);
  });

  test('an archive over MAX_UPLOAD_BYTES: failed naming MAX_UPLOAD_BYTES; other jobs still upload', async () => {
    credential = await mint();
    await useStation(station.url, credential);
    mkdirSync(join(scanRoot, 'huge'));
    writeFileSync(join(scanRoot, 'huge', '.upload_dir'), '');
    writeFileSync(join(scanRoot, 'huge', 'noise.bin'), randomBytes(MAX_UPLOAD_BYTES + 100_000));
    await runNow();
    const huge = await jobState('huge');
    assert.equal(huge.last_status, 'failed');
    assert.match(String(huge.last_error), /MAX_UPLOAD_BYTES/);
    assert.equal(huge.staged, true);
    const small = await jobState('small');
    assert.equal(small.last_status, 'uploaded', small.last_error ?? undefined);
    assert.equal(small.staged, false);
    assert.equal((await snapshotsOf('small')).length, 1);
    assert.deepEqual(await snapshotsOf('huge'), []);
    expectStatus(await scoutAdmin.post('/api/directories/delete-job', { relative_path: 'huge' }), 200);
    rmSync(join(scanRoot, 'huge'), { recursive: true, force: true });
  });
});

describe('an unreachable Station', () => {
  test('each cycle fails saying the Station cannot be reached; after 3 the circuit opens', async () => {
    writeFileSync(join(scanRoot, 'small', 'b.txt'), 'a change to upload');
    await useStation('http://127.0.0.1:1', credential);
    for (let cycle = 1; cycle <= 3; cycle += 1) {
      const status = await runNow();
      const state = await jobState('small');
      assert.equal(state.last_status, 'failed');
      assert.match(String(state.last_error), /cannot reach the Station/i);
      assert.equal(state.staged, true);
      assert.equal(status.upload_circuit.consecutive_failures, cycle);
      if (cycle < 3) assert.equal(status.upload_circuit.state, 'closed', `after cycle ${cycle}`);
    }
    const status = await scoutStatus();
    assert.equal(status.upload_circuit.state, 'open');
    assert.equal(status.upload_circuit.consecutive_failures, 3);
    assert.match(String(status.upload_circuit.retry_at), ISO);
    assert.ok(Date.parse(String(status.upload_circuit.retry_at)) > Date.now(), 'retry_at lies in the future');
  });

  test('run-now with the right station_url closes the circuit and uploads the staged archive', async () => {
    await useStation(station.url, credential);
    const status = await runNow();
    assert.deepEqual(status.upload_circuit, { state: 'closed', consecutive_failures: 0, retry_at: null });
    const state = await jobState('small');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    assert.equal(state.last_error, null);
    assert.equal(state.staged, false);
    assert.match(String(state.last_stored_as), /^small__.+\.tar\.zst$/);
    const stored = await snapshotsOf('small');
    assert.equal(stored.length, 2);
    assert.ok(
      stored.includes(String(state.last_stored_as)),
      `${state.last_stored_as} in ${stored.join(', ')}`,
    );
  });
});
