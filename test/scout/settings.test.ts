// Scout health, settings (defaults, environment overrides, validation, persistence) and the
// IDs in /api/status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminClient, Client, type Reply } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const NAMESPACE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
const ENV = {
  STATION_URL: 'https://station.example:6555',
  SCOUT_ID: 'env-scout',
  CRON_SCHEDULE: '*/20 * * * *',
  SCOUT_CREDENTIAL: 'bkd_st_from_environment',
};

let scout: TestServer;
let envScout: TestServer;
let admin: Client;
let envAdmin: Client;

before(async () => {
  // CRON_SCHEDULE '' undoes the test helper's quiet schedule, to see the real default.
  [scout, envScout] = await Promise.all([
    startServer('scout', { env: { CRON_SCHEDULE: '' } }),
    startServer('scout', { env: ENV }),
  ]);
  [admin, envAdmin] = await Promise.all([adminClient(scout.url), adminClient(envScout.url)]);
});

after(async () => {
  await Promise.all([scout?.dispose(), envScout?.dispose()]);
});

function badRequest(reply: Reply, field: RegExp): void {
  assert.equal(reply.status, 400, `expected 400, got ${reply.status}: ${reply.text}`);
  assert.equal(typeof reply.body?.detail, 'string', reply.text);
  assert.match(reply.body.detail, field);
}

test('GET /health is {status: "ok"} without signing in', async () => {
  const reply = await new Client(scout.url).get('/health');
  assert.equal(reply.status, 200, reply.text);
  assert.equal(reply.body.status, 'ok');
});

describe('defaults', () => {
  test('GET /api/settings on a fresh Scout', async () => {
    const reply = await admin.get('/api/settings');
    assert.equal(reply.status, 200, reply.text);
    const { settings } = reply.body;
    assert.equal(settings.cron_schedule, '0 * * * *');
    assert.match(settings.scout_id, NAMESPACE, 'the default scout_id (host name) is a valid name');
    assert.equal(settings.station_url, null);
    assert.equal(settings.scout_credential ?? null, null);
  });

  test('STATION_URL, SCOUT_ID, CRON_SCHEDULE and SCOUT_CREDENTIAL fill the defaults', async () => {
    const reply = await envAdmin.get('/api/settings');
    assert.equal(reply.status, 200, reply.text);
    const { settings } = reply.body;
    assert.equal(settings.station_url, ENV.STATION_URL);
    assert.equal(settings.scout_id, ENV.SCOUT_ID);
    assert.equal(settings.cron_schedule, ENV.CRON_SCHEDULE);
    assert.equal(settings.scout_credential, ENV.SCOUT_CREDENTIAL);
    const status = await envAdmin.get('/api/status');
    assert.equal(status.body.scout_id, ENV.SCOUT_ID);
  });

  test('saved values beat the environment, and {} falls back to it', async () => {
    const saved = await envAdmin.post('/api/settings', { scout_id: 'saved-id', cron_schedule: '5 4 * * *' });
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.body.settings.scout_id, 'saved-id');
    assert.equal(saved.body.settings.cron_schedule, '5 4 * * *');
    assert.equal(
      saved.body.settings.station_url,
      ENV.STATION_URL,
      'omitted fields come from the environment',
    );
    const reset = await envAdmin.post('/api/settings', {});
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.settings.scout_id, ENV.SCOUT_ID);
    assert.equal(reset.body.settings.cron_schedule, ENV.CRON_SCHEDULE);
    assert.equal(reset.body.settings.scout_credential, ENV.SCOUT_CREDENTIAL);
  });
});

describe('validation and access', () => {
  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['a bad cron expression', { cron_schedule: 'every hour' }, /cron_schedule/],
    ['an out-of-range cron field', { cron_schedule: '61 * * * *' }, /cron_schedule/],
    ['a cron schedule that is not a string', { cron_schedule: 5 }, /cron_schedule/],
    ['an ftp:// station_url', { station_url: 'ftp://station.example' }, /station_url/],
    ['a station_url that is no URL', { station_url: 'station.example' }, /station_url/],
    ['a scout_id with a path', { scout_id: '../x' }, /scout_id/],
    ['a scout_id starting with "."', { scout_id: '.hidden' }, /scout_id/],
    ['a scout_id with a slash', { scout_id: 'a/b' }, /scout_id/],
    ['a scout_id of 65 characters', { scout_id: 'a'.repeat(65) }, /scout_id/],
    ['an empty scout_id', { scout_id: '' }, /scout_id/],
    ['a scout_credential that is not a string', { scout_credential: 42 }, /scout_credential/],
    ['an unknown key', { cron_schedule: '0 * * * *', nightly: true }, /nightly/],
  ];
  for (const [what, body, field] of invalid) {
    test(`${what} is 400 naming the field and changes nothing`, async () => {
      const good = await admin.post('/api/settings', { cron_schedule: '15 * * * *', scout_id: 'valid-id' });
      assert.equal(good.status, 200, good.text);
      badRequest(await admin.post('/api/settings', body), field);
      const now = (await admin.get('/api/settings')).body.settings;
      assert.equal(now.cron_schedule, '15 * * * *');
      assert.equal(now.scout_id, 'valid-id');
    });
  }

  test('malformed JSON is 400', async () => {
    badRequest(await admin.post('/api/settings', undefined, { raw: '{"cron_schedule":' }), /not valid JSON/);
  });

  test('valid values are accepted and returned normalised', async () => {
    const body = {
      station_url: 'http://10.0.0.5:6555',
      scout_id: 'host_1.example-A',
      cron_schedule: '*/15 * * * *',
      scout_credential: 'bkd_st_saved_secret',
    };
    const reply = await admin.post('/api/settings', body);
    assert.equal(reply.status, 200, reply.text);
    for (const [key, value] of Object.entries(body)) assert.equal(reply.body.settings[key], value, key);
    const read = await admin.get('/api/settings');
    for (const [key, value] of Object.entries(body)) assert.equal(read.body.settings[key], value, key);
    assert.equal((await admin.get('/api/status')).body.scout_id, 'host_1.example-A');
  });

  test('a non-admin account may not read or save settings', async () => {
    const password = 'scout-operator-1';
    assert.equal((await admin.post('/api/users', { username: 'op', password })).status, 201);
    const operator = new Client(scout.url);
    assert.equal((await operator.login('op', password)).status, 200);
    const changed = await operator.post('/api/session/change-password', {
      current_password: password,
      new_password: 'scout-operator-2',
      confirm_new_password: 'scout-operator-2',
    });
    assert.equal(changed.status, 200, changed.text);
    for (const reply of [await operator.get('/api/settings'), await operator.post('/api/settings', {})]) {
      assert.equal(reply.status, 403, reply.text);
      assert.match(reply.body.detail, /admin/);
    }
    assert.equal((await new Client(scout.url).get('/api/settings')).status, 401);
  });

  test('a non-admin account does not get the Station token through /api/status', async () => {
    const credential = 'bkd_st_admin_only_secret';
    const saved = await admin.post('/api/settings', { scout_credential: credential });
    assert.equal(saved.status, 200, saved.text);
    const password = 'scout-viewer-1';
    assert.equal((await admin.post('/api/users', { username: 'viewer', password })).status, 201);
    const viewer = new Client(scout.url);
    assert.equal((await viewer.login('viewer', password)).status, 200);
    const changed = await viewer.post('/api/session/change-password', {
      current_password: password,
      new_password: 'scout-viewer-2',
      confirm_new_password: 'scout-viewer-2',
    });
    assert.equal(changed.status, 200, changed.text);
    const status = await viewer.get('/api/status');
    assert.equal(status.status, 200, status.text);
    assert.equal(typeof status.body.scout_id, 'string');
    // GET /api/settings is admin-only; the same secret must not leak through the status.
    assert.equal(
      status.text.includes(credential),
      false,
      `a non-admin sees scout_credential in /api/status: ${status.text}`,
    );
  });
});

describe('status and restart', () => {
  test('status has scout_id and a hex scout_instance_id; both survive a restart with the settings', async () => {
    const saved = await admin.post('/api/settings', {
      station_url: 'https://backup.example',
      scout_id: 'persisted-scout',
      cron_schedule: '30 2 * * *',
      scout_credential: 'bkd_st_persisted',
    });
    assert.equal(saved.status, 200, saved.text);
    const status = await admin.get('/api/status');
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.scout_id, 'persisted-scout');
    const instanceId = status.body.scout_instance_id;
    assert.match(instanceId, /^[0-9a-f]{16,64}$/);
    assert.equal(status.body.settings.cron_schedule, '30 2 * * *', 'an admin session sees settings');

    const other = await envAdmin.get('/api/status');
    assert.notEqual(other.body.scout_instance_id, instanceId, 'each Scout gets its own instance id');

    scout = await scout.restart();
    admin = await adminClient(scout.url);
    const after = await admin.get('/api/status');
    assert.equal(after.body.scout_instance_id, instanceId);
    assert.equal(after.body.scout_id, 'persisted-scout');
    const settings = (await admin.get('/api/settings')).body.settings;
    for (const key of ['station_url', 'scout_id', 'cron_schedule', 'scout_credential']) {
      assert.equal(settings[key], saved.body.settings[key], key);
    }
  });
});
