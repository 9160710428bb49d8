// The Station's route fuzz (fuzz-routes.test.ts) on a real PostgreSQL server: its driver and
// server, not PGlite's, see the hostile values that get past the routes' first checks.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sha256 } from '../helpers/hashes.ts';
import { adminClient, type Client, mintAutomationToken } from '../helpers/http.ts';
import { onPostgres } from '../helpers/postgres-runner.ts';
import { mintStationToken } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { archiveMeta, initiate, upload } from '../helpers/uploads.ts';
import {
  assertClean,
  assertHealthy,
  fuzz,
  SEED,
  type StationFacts,
  stationTarget,
  summary,
  victims,
} from './fuzz-run.ts';

const LABEL = 'route fuzz (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  let station: TestServer | undefined;
  let facts: StationFacts;

  before(async () => {
    station = await stationOn('fuzz_routes');
    const admin: Client = await adminClient(station.url);
    const credential = await mintStationToken(admin);
    const instanceId = `inst${randomBytes(8).toString('hex')}`;
    const where = { scout_id: 'fuzz-host', scout_instance_id: instanceId, job_name: 'documents' };
    const data = randomBytes(2048);
    const keyFingerprint = sha256(randomBytes(32));
    const stored = await upload(
      station.url,
      credential,
      data,
      archiveMeta(data, { ...where, encryption_key_fingerprint: keyFingerprint }),
    );
    assert.equal(stored.finalize?.status, 200, JSON.stringify(stored.finalize?.body));
    const filename = String(stored.finalize?.body.stored_as);
    const restore = await admin.post(
      `/api/snapshots/fuzz-host/${instanceId}/documents/${filename}/restore`,
      {},
    );
    assert.equal(restore.status, 201, restore.text);
    const waiting = await initiate(station.url, credential, archiveMeta(randomBytes(64), where));
    assert.equal(waiting.status, 200, JSON.stringify(waiting.body));
    facts = {
      server: station,
      admin,
      automationToken: await mintAutomationToken(admin, ['read', 'backup', 'restore', 'manage']),
      credential,
      spareCredential: await mintStationToken(admin),
      instanceId,
      filename,
      requestId: String(restore.body.request.id),
      uploadId: String(waiting.body.upload_id),
      victims: await victims(admin),
    };
  });

  after(async () => {
    await station?.dispose();
  });

  test(`${LABEL}: the Station answers no fuzzed request with 500 or more and stays healthy`, async () => {
    const started = Date.now();
    const target = stationTarget(facts);
    const outcome = await fuzz(target, SEED + 2);
    summary('station on PostgreSQL', outcome, Date.now() - started);
    assertClean(outcome);
    await assertHealthy(facts.server, facts.automationToken);
  });
});
