// Automation-token scopes on both roles: each scope against a route it allows and one it
// forbids, plus the routes no token may use and tokens crossing roles.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.ts';
import { adminClient, type Client, mintAutomationToken, type Reply } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let station: TestServer;
let scout: TestServer;
let stationAdmin: Client;
let scoutAdmin: Client;
const stationTokens: Record<string, string> = {};
const scoutTokens: Record<string, string> = {};

before(async () => {
  [station, scout] = await Promise.all([startServer('station'), startServer('scout')]);
  [stationAdmin, scoutAdmin] = await Promise.all([adminClient(station.url), adminClient(scout.url)]);
  for (const scope of ['read', 'backup', 'restore', 'manage']) {
    stationTokens[scope] = await mintAutomationToken(stationAdmin, [scope]);
    scoutTokens[scope] = await mintAutomationToken(scoutAdmin, [scope]);
  }
});

after(async () => {
  await Promise.all([station?.dispose(), scout?.dispose()]);
});

const denied = (reply: Reply, status: number, detail: RegExp) => expectStatus(reply, status, detail);
const ok = (reply: Reply) => expectStatus(reply, 200);

describe('station', () => {
  test('read: overview without settings; section=settings is forbidden', async () => {
    const token = stationTokens.read;
    const overview = await stationAdmin.get('/api/overview', { token });
    ok(overview);
    assert.equal('settings' in overview.body, false, 'a read token must not see settings');
    assert.ok(overview.body.storage, 'storage section present');
    assert.ok(Array.isArray(overview.body.scouts), 'scouts section present');
    ok(await stationAdmin.get('/api/overview?section=storage', { token }));
    ok(await stationAdmin.get('/api/overview?section=snapshots', { token }));
    denied(await stationAdmin.get('/api/overview?section=settings', { token }), 403, /manage|settings/);
  });

  test('read: backup and manage routes are forbidden', async () => {
    const token = stationTokens.read;
    denied(await stationAdmin.post('/api/admin/uploads/pause', undefined, { token }), 403, /backup/);
    denied(await stationAdmin.post('/api/admin/uploads/resume', undefined, { token }), 403, /backup/);
    denied(await stationAdmin.post('/api/settings', { retention_keep_last: 3 }, { token }), 403, /manage/);
  });

  test('backup: pause and resume uploads; overview and settings are forbidden', async () => {
    const token = stationTokens.backup;
    const paused = await stationAdmin.post('/api/admin/uploads/pause', undefined, { token });
    ok(paused);
    assert.equal(paused.body.uploads_paused, true);
    const overview = await stationAdmin.get('/api/overview?section=storage');
    assert.equal(overview.body.storage.uploads_paused, true, 'the pause is visible in the overview');
    const resumed = await stationAdmin.post('/api/admin/uploads/resume', undefined, { token });
    ok(resumed);
    assert.equal(resumed.body.uploads_paused, false);
    denied(await stationAdmin.get('/api/overview', { token }), 403, /read/);
    denied(await stationAdmin.post('/api/settings', {}, { token }), 403, /manage/);
  });

  test('manage: settings, and read and backup routes too', async () => {
    const token = stationTokens.manage;
    const saved = await stationAdmin.post('/api/settings', { retention_keep_last: 12 }, { token });
    ok(saved);
    assert.equal(saved.body.settings.retention_keep_last, 12);
    const overview = await stationAdmin.get('/api/overview', { token });
    ok(overview);
    assert.equal(overview.body.settings.retention_keep_last, 12, 'a manage token sees settings');
    const section = await stationAdmin.get('/api/overview?section=settings', { token });
    ok(section);
    assert.equal(section.body.settings.retention_keep_last, 12);
    ok(await stationAdmin.post('/api/admin/uploads/pause', undefined, { token }));
    ok(await stationAdmin.post('/api/admin/uploads/resume', undefined, { token }));
    ok(await stationAdmin.post('/api/settings', {}, { token }));
  });

  test('restore (no route yet): read and backup routes are forbidden', async () => {
    const token = stationTokens.restore;
    denied(await stationAdmin.get('/api/overview', { token }), 403, /read/);
    denied(await stationAdmin.post('/api/admin/uploads/pause', undefined, { token }), 403, /backup/);
    denied(await stationAdmin.post('/api/settings', {}, { token }), 403, /manage/);
  });

  test('several scopes on one token add up', async () => {
    const token = await mintAutomationToken(stationAdmin, ['read', 'backup']);
    ok(await stationAdmin.get('/api/overview', { token }));
    ok(await stationAdmin.post('/api/admin/uploads/resume', undefined, { token }));
    denied(await stationAdmin.post('/api/settings', {}, { token }), 403, /manage/);
  });

  test('no token may use account or token controls, not even manage', async () => {
    for (const scope of ['read', 'backup', 'restore', 'manage']) {
      const token = stationTokens[scope];
      denied(await stationAdmin.get('/api/users', { token }), 403, /token/i);
      denied(await stationAdmin.get('/api/automation-tokens', { token }), 403, /token/i);
      denied(
        await stationAdmin.post('/api/automation-tokens', { name: 'x', scopes: ['read'] }, { token }),
        403,
        /token/i,
      );
    }
    // The same routes work with the admin's session cookie.
    ok(await stationAdmin.get('/api/users'));
    ok(await stationAdmin.get('/api/automation-tokens'));
  });

  test('a token identifies itself in /api/session/me', async () => {
    const me = await stationAdmin.get('/api/session/me', { token: stationTokens.read });
    ok(me);
    assert.equal(me.body.authenticated, true);
    assert.deepEqual(me.body.automation_token.scopes, ['read']);
  });

  test('an invalid bearer token is 401 even beside a valid cookie', async () => {
    denied(await stationAdmin.get('/api/overview', { token: 'bkd_at_not-a-real-token' }), 401, /token/i);
    denied(
      await stationAdmin.get('/api/overview', { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }),
      401,
      /Bearer/,
    );
  });
});

describe('scout', () => {
  test('replicate is a Station scope only: the Scout refuses to create such a token', async () => {
    const reply = await scoutAdmin.post('/api/automation-tokens', { name: 'replica', scopes: ['replicate'] });
    expectStatus(reply, 400, /replicate.*does not exist on the scout/);
    const onStation = await stationAdmin.post('/api/automation-tokens', {
      name: 'replica',
      scopes: ['replicate'],
    });
    expectStatus(onStation, 201);
  });

  test('read: status without settings; settings routes are forbidden', async () => {
    const token = scoutTokens.read;
    const status = await scoutAdmin.get('/api/status', { token });
    ok(status);
    assert.equal('settings' in status.body, false, 'a read token must not see settings');
    assert.equal(typeof status.body.scout_id, 'string');
    assert.equal(typeof status.body.scout_instance_id, 'string');
    denied(await scoutAdmin.get('/api/settings', { token }), 403, /manage/);
    denied(await scoutAdmin.post('/api/settings', {}, { token }), 403, /manage/);
  });

  test('read: backup routes are forbidden', async () => {
    const token = scoutTokens.read;
    denied(await scoutAdmin.post('/api/uploads/pause', undefined, { token }), 403, /backup/);
    denied(await scoutAdmin.post('/api/uploads/resume', undefined, { token }), 403, /backup/);
  });

  test('backup: pause and resume uploads; status and settings are forbidden', async () => {
    const token = scoutTokens.backup;
    const paused = await scoutAdmin.post('/api/uploads/pause', undefined, { token });
    ok(paused);
    assert.equal(paused.body.uploads_paused, true);
    assert.equal((await scoutAdmin.get('/api/status')).body.uploads_paused, true);
    const resumed = await scoutAdmin.post('/api/uploads/resume', undefined, { token });
    ok(resumed);
    assert.equal(resumed.body.uploads_paused, false);
    denied(await scoutAdmin.get('/api/status', { token }), 403, /read/);
    denied(await scoutAdmin.get('/api/settings', { token }), 403, /manage/);
  });

  test('manage: settings, and read and backup routes too', async () => {
    const token = scoutTokens.manage;
    const settings = await scoutAdmin.get('/api/settings', { token });
    ok(settings);
    assert.equal(typeof settings.body.settings.cron_schedule, 'string');
    const saved = await scoutAdmin.post('/api/settings', { cron_schedule: '*/10 * * * *' }, { token });
    ok(saved);
    assert.equal(saved.body.settings.cron_schedule, '*/10 * * * *');
    const status = await scoutAdmin.get('/api/status', { token });
    ok(status);
    assert.equal(status.body.settings.cron_schedule, '*/10 * * * *', 'a manage token sees settings');
    ok(await scoutAdmin.post('/api/uploads/pause', undefined, { token }));
    ok(await scoutAdmin.post('/api/uploads/resume', undefined, { token }));
    ok(await scoutAdmin.post('/api/settings', {}, { token }));
  });

  test('restore (no route yet): read and backup routes are forbidden', async () => {
    const token = scoutTokens.restore;
    denied(await scoutAdmin.get('/api/status', { token }), 403, /read/);
    denied(await scoutAdmin.post('/api/uploads/pause', undefined, { token }), 403, /backup/);
    denied(await scoutAdmin.get('/api/settings', { token }), 403, /manage/);
  });

  test('no token may use account or token controls, not even manage', async () => {
    for (const scope of ['read', 'backup', 'restore', 'manage']) {
      const token = scoutTokens[scope];
      denied(await scoutAdmin.get('/api/users', { token }), 403, /token/i);
      denied(await scoutAdmin.get('/api/automation-tokens', { token }), 403, /token/i);
    }
  });
});

describe('across roles', () => {
  test('a Station token does not work on the Scout, and a Scout token not on the Station', async () => {
    for (const scope of ['read', 'manage']) {
      denied(await scoutAdmin.get('/api/status', { token: stationTokens[scope] }), 401, /token/i);
      denied(await stationAdmin.get('/api/overview', { token: scoutTokens[scope] }), 401, /token/i);
    }
    const me = await stationAdmin.get('/api/session/me', { token: scoutTokens.manage });
    assert.equal(me.status, 401);
  });
});
