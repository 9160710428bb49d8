// Malformed input to every route of both roles (issue #13 item 10): hostile path segments
// (NUL, invalid UTF-8, `%00`, 3,000-byte segments, dot segments), hostile query values,
// bodies of every shape under every content type, with no credentials, garbage credentials,
// an admin session, an automation token and (on `/backup`) a Station token. No answer may be
// 500 or more, and the server must still be healthy afterwards. Routes are read from the
// source (fuzz-kit.ts discoverRoutes), so a new route is fuzzed without touching this file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTree } from '../helpers/files.ts';
import { Client, mintAutomationToken } from '../helpers/http.ts';
import {
  jobState,
  mintStationToken,
  runNow,
  scoutStatus,
  startScout,
  startStation,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { archiveMeta, initiate } from '../helpers/uploads.ts';
import { discoverRoutes } from './fuzz-kit.ts';
import {
  assertClean,
  assertHealthy,
  assetName,
  bearer,
  CORE_BODIES,
  type Credential,
  fuzz,
  garbageCredential,
  SEED,
  sessionHeaders,
  stationTarget,
  summary,
  type Target,
  victims,
} from './fuzz-run.ts';

describe('fuzzing every route', () => {
  let station: TestServer;
  let scout: TestServer;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let stationAuto: string;
  let scoutAuto: string;
  let credential: string;
  let spareCredential: string;
  let instanceId: string;
  let filename: string;
  let requestId: string;
  let uploadId: string;
  let stationVictims: { userId: string; tokenId: string };
  let scoutVictims: { userId: string; tokenId: string };

  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    credential = await mintStationToken(stationAdmin);
    spareCredential = await mintStationToken(stationAdmin);
    ({ server: scout, admin: scoutAdmin } = await startScout({
      fill: (scan) => buildTree(scan, { 'documents/.upload_dir': '', 'documents/a.txt': 'alpha' }),
      env: { STATION_URL: station.url, SCOUT_CREDENTIAL: credential, SCOUT_ID: 'fuzz-host' },
    }));
    await runNow(scoutAdmin);
    const state = await jobState(scoutAdmin, 'documents');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    filename = String(state.last_stored_as);
    instanceId = (await scoutStatus(scoutAdmin)).scout_instance_id;
    const restore = await stationAdmin.post(
      `/api/snapshots/fuzz-host/${instanceId}/documents/${filename}/restore`,
      {},
    );
    assert.equal(restore.status, 201, restore.text);
    requestId = String(restore.body.request.id);
    const data = randomBytes(64);
    const started = await initiate(
      station.url,
      credential,
      archiveMeta(data, { scout_id: 'fuzz-host', scout_instance_id: instanceId, job_name: 'documents' }),
    );
    assert.equal(started.status, 200, JSON.stringify(started.body));
    uploadId = String(started.body.upload_id);
    stationAuto = await mintAutomationToken(stationAdmin, ['read', 'backup', 'restore', 'manage']);
    scoutAuto = await mintAutomationToken(scoutAdmin, ['read', 'backup', 'restore', 'manage']);
    stationVictims = await victims(stationAdmin);
    scoutVictims = await victims(scoutAdmin);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
  });

  // Found by the fuzz: two deletes of one hook file at once made the slower one a 500.
  test('uploads, listings and deletes of one hook file at once answer 2xx or 404, never 500', async () => {
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all([
        ...Array.from({ length: 6 }, () =>
          scoutAdmin.upload('/api/hooks/files', 'hook_file', 'race.sh', '#!/bin/sh\nexit 0\n'),
        ),
        ...Array.from({ length: 6 }, () => scoutAdmin.get('/api/hooks')),
        ...Array.from({ length: 6 }, () => scoutAdmin.delete('/api/hooks/files/race.sh')),
      ]);
      for (const reply of replies)
        assert.ok([200, 201, 404].includes(reply.status), `${reply.status} ${reply.text}`);
    }
  });

  // Found by the fuzz: these reached PostgreSQL or the file system and answered 500.
  test('a NUL in a path, query or JSON field and an over-long relative_path are 400s that say so', async () => {
    const chunk = await fetch(`${station.url}/backup/uploads/${uploadId}%00/chunk?offset=0`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/octet-stream' },
      body: Buffer.from('x'),
    });
    const chunkBody = (await chunk.json()) as { code?: string; detail: string };
    assert.equal(chunk.status, 400, JSON.stringify(chunkBody));
    assert.equal(chunkBody.code, 'nul_character');
    assert.match(chunkBody.detail, /%00 \(a NUL character\)/);
    const overview = await stationAdmin.get('/api/overview?section=a%00b');
    assert.equal(overview.status, 400, overview.text);
    const login = await new Client(station.url).post('/api/session/login', {
      username: 'a\u0000b',
      password: 'whatever',
    });
    assert.equal(login.status, 400, login.text);
    assert.match(login.body.detail, /^username must not contain a NUL character/);
    const user = await stationAdmin.post('/api/users', {
      username: 'fine',
      password: 'password-123',
      nested: { list: ['ok', 'no\u0000'] },
    });
    assert.equal(user.status, 400, user.text);
    assert.match(user.body.detail, /^nested\.list\.1 must not contain/);
    const long = await scoutAdmin.get(`/api/directories/children?relative_path=${'x'.repeat(3000)}`);
    assert.equal(long.status, 400, long.text);
    assert.match(long.body.detail, /^relative_path names a file or folder longer than 255 bytes/);
  });

  // The Scout first: the Station's final phase revokes the Scout's Station token.
  test('the Scout answers no fuzzed request with 500 or more and stays healthy', async () => {
    const started = Date.now();
    const routes = discoverRoutes('scout');
    assert.ok(routes.length >= 45, `found ${routes.length} Scout routes`);
    const admin: Credential = { name: 'admin session', headers: sessionHeaders(scoutAdmin) };
    const auto: Credential = { name: 'automation token', headers: bearer(scoutAuto) };
    const none: Credential = { name: 'no credentials', headers: () => ({}) };
    const garbage = garbageCredential('service_scout_session');
    const target: Target = {
      server: scout,
      routes,
      valid: (route, param) => {
        if (param === 'userId') return scoutVictims.userId;
        if (param === 'tokenId') return scoutVictims.tokenId;
        if (param === 'filename') return route.path.includes('/hooks/') ? 'fuzz.sh' : 'fuzz.pem';
        if (param === '*') return 'jobs/documents';
        if (param === 'name') return assetName('scout');
        return 'x';
      },
      query: {
        'GET /api/directories/children': 'relative_path=.',
        'GET /api/directories/browse': 'relative_path=documents',
        'GET /api/directories/size': 'relative_path=documents',
      },
      queryKeys: {
        'GET /api/directories/children': ['relative_path'],
        'GET /api/directories/browse': ['relative_path'],
        'GET /api/directories/size': ['relative_path'],
      },
      body: {
        ...CORE_BODIES,
        'POST /api/settings': { cron_schedule: '0 0 29 2 *' },
        'POST /api/hooks': { hook_pre_command: '', hook_post_command: '' },
        'POST /api/directories/save-job': { relative_path: 'documents', config: {} },
        'POST /api/directories/delete-job': { relative_path: 'documents' },
        'POST /api/directories/exclude': { relative_path: 'documents/a.txt' },
        'POST /api/directories/force-send': { relative_path: 'documents' },
        'POST /api/directories/clear-staged': { relative_path: 'documents' },
        'POST /api/recovery/preview': { relative_path: 'documents' },
        'POST /api/recovery/restore': { relative_path: 'documents' },
        'POST /api/restore-requests/decision': { id: requestId, decision: 'reject' },
        'POST /backup/restore-notifications': { id: requestId },
        'POST /api/drills/run': { relative_path: 'documents' },
      },
      credentials: (route) =>
        route.path.startsWith('/api/')
          ? [
              [admin, 'full'],
              [auto, 'medium'],
              [none, 'light'],
              [garbage, 'light'],
            ]
          : [
              [none, 'full'],
              [garbage, 'light'],
            ],
    };
    const outcome = await fuzz(target, SEED);
    summary('scout', outcome, Date.now() - started);
    assertClean(outcome);
    await assertHealthy(scout, scoutAuto);
  });

  test('the Station answers no fuzzed request with 500 or more and stays healthy', async () => {
    const started = Date.now();
    const target = stationTarget({
      server: station,
      admin: stationAdmin,
      automationToken: stationAuto,
      credential,
      spareCredential,
      instanceId,
      filename,
      requestId,
      uploadId,
      victims: stationVictims,
    });
    assert.ok(target.routes.length >= 45, `found ${target.routes.length} Station routes`);
    const outcome = await fuzz(target, SEED + 1);
    summary('station', outcome, Date.now() - started);
    assertClean(outcome);
    await assertHealthy(station, stationAuto);
  });
});
