// How a Scout reports a Station that refuses or cannot take its upload (a real Station and
// a real Scout): a revoked Station token, a token bound to another instance, an archive over
// MAX_UPLOAD_BYTES and an unreachable Station, which opens the upload circuit after three
// cycles; run-now against the right address closes it and uploads the staged archive.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import { sha256 } from '../helpers/hashes.ts';
import type { Client } from '../helpers/http.ts';
import {
  jobState,
  mintStationToken,
  passingUploadWaits,
  runNow,
  saveStationSettings,
  scoutStatus,
  snapshotsOf,
  startScout,
  startStation,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
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

const mint = () => mintStationToken(stationAdmin);
const useStation = (stationUrl: string, token: string) =>
  saveStationSettings(scoutAdmin, stationUrl, token, SCOUT_ID);
const snapshots = (job: string) => snapshotsOf(stationAdmin, job, SCOUT_ID);

before(async () => {
  ({ server: station, admin: stationAdmin } = await startStation({
    env: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) },
  }));
  ({
    server: scout,
    admin: scoutAdmin,
    scanRoot,
  } = await startScout({
    fill: (scan) => buildTree(scan, { 'small/.upload_dir': '', 'small/a.txt': 'alpha' }),
  }));
});

after(async () => {
  await scout?.dispose();
  await station?.dispose();
});

describe('upload refusals', () => {
  test('a revoked Station token: failed, says to mint a new token as scout_credential, archive staged', async () => {
    const revoked = await mint();
    const hash = sha256(revoked);
    expectStatus(await stationAdmin.delete(`/api/credentials/${hash}`), 200);
    await useStation(station.url, revoked);
    const status = await runNow(scoutAdmin);
    const state = await jobState(scoutAdmin, 'small');
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
    await runNow(scoutAdmin);
    const state = await jobState(scoutAdmin, 'small');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /instance/);
    assert.match(String(state.last_error), /mint/i);
    assert.equal(state.staged, true);
    assert.deepEqual(await snapshots('small'), []);
  });

  test('an archive over MAX_UPLOAD_BYTES: failed naming MAX_UPLOAD_BYTES; other jobs still upload', async () => {
    credential = await mint();
    await useStation(station.url, credential);
    mkdirSync(join(scanRoot, 'huge'));
    writeFileSync(join(scanRoot, 'huge', '.upload_dir'), '');
    writeFileSync(join(scanRoot, 'huge', 'noise.bin'), randomBytes(MAX_UPLOAD_BYTES + 100_000));
    await runNow(scoutAdmin);
    const huge = await jobState(scoutAdmin, 'huge');
    assert.equal(huge.last_status, 'failed');
    assert.match(String(huge.last_error), /MAX_UPLOAD_BYTES/);
    assert.equal(huge.staged, true);
    const small = await jobState(scoutAdmin, 'small');
    assert.equal(small.last_status, 'uploaded', small.last_error ?? undefined);
    assert.equal(small.staged, false);
    assert.equal((await snapshots('small')).length, 1);
    assert.deepEqual(await snapshots('huge'), []);
    expectStatus(await scoutAdmin.post('/api/directories/delete-job', { relative_path: 'huge' }), 200);
    rmSync(join(scanRoot, 'huge'), { recursive: true, force: true });
  });
});

describe('an unreachable Station', () => {
  test('each cycle fails saying the Station cannot be reached; after 3 the circuit opens', async () => {
    writeFileSync(join(scanRoot, 'small', 'b.txt'), 'a change to upload');
    await useStation('http://127.0.0.1:1', credential);
    for (let cycle = 1; cycle <= 3; cycle += 1) {
      const status = await passingUploadWaits(scout, () => runNow(scoutAdmin));
      const state = await jobState(scoutAdmin, 'small');
      assert.equal(state.last_status, 'failed');
      assert.match(String(state.last_error), /cannot reach the Station/i);
      assert.equal(state.staged, true);
      assert.equal(status.upload_circuit.consecutive_failures, cycle);
      if (cycle < 3) assert.equal(status.upload_circuit.state, 'closed', `after cycle ${cycle}`);
    }
    const status = await scoutStatus(scoutAdmin);
    assert.equal(status.upload_circuit.state, 'open');
    assert.equal(status.upload_circuit.consecutive_failures, 3);
    assert.match(String(status.upload_circuit.retry_at), ISO);
    assert.ok(Date.parse(String(status.upload_circuit.retry_at)) > Date.now(), 'retry_at lies in the future');
  });

  test('run-now with the right station_url closes the circuit and uploads the staged archive', async () => {
    await useStation(station.url, credential);
    const status = await runNow(scoutAdmin);
    assert.deepEqual(status.upload_circuit, { state: 'closed', consecutive_failures: 0, retry_at: null });
    const state = await jobState(scoutAdmin, 'small');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    assert.equal(state.last_error, null);
    assert.equal(state.staged, false);
    assert.match(String(state.last_stored_as), /^small__.+\.tar\.zst$/);
    const stored = await snapshots('small');
    assert.equal(stored.length, 2);
    assert.ok(
      stored.includes(String(state.last_stored_as)),
      `${state.last_stored_as} in ${stored.join(', ')}`,
    );
  });
});
