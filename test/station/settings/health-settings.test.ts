// Station health, readiness, settings and the overview sections.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminClient, Client, type Reply } from '../../helpers/http.ts';
import { freePort, runBackupd, startServer, type TestServer } from '../../helpers/server.ts';

const TIB = 1024 ** 4;

let station: TestServer;
let admin: Client;

before(async () => {
  station = await startServer('station');
  admin = await adminClient(station.url);
});

after(async () => {
  await station?.dispose();
});

function badRequest(reply: Reply, field: RegExp): void {
  assert.equal(reply.status, 400, `expected 400, got ${reply.status}: ${reply.text}`);
  assert.equal(typeof reply.body?.detail, 'string', reply.text);
  assert.match(reply.body.detail, field);
}

describe('health', () => {
  test('GET /health reports storage and the upload limit', async () => {
    const anonymous = new Client(station.url);
    const reply = await anonymous.get('/health');
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.status, 'ok');
    const { storage } = reply.body;
    assert.equal(storage.backup_root, join(station.dataDir, 'snapshots'));
    assert.equal(storage.writable, true);
    assert.ok(
      Number.isSafeInteger(storage.free_bytes) && storage.free_bytes >= 0,
      `free_bytes ${storage.free_bytes}`,
    );
    assert.ok(
      Number.isSafeInteger(storage.total_bytes) && storage.total_bytes > 0,
      `total_bytes ${storage.total_bytes}`,
    );
    assert.ok(storage.free_bytes <= storage.total_bytes);
    assert.equal(reply.body.max_upload_bytes, TIB);
  });

  test('GET /health/ready is ok', async () => {
    const reply = await new Client(station.url).get('/health/ready');
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.status, 'ok');
  });

  test('a backup root that cannot be created stops start-up with one line naming it', async () => {
    const blocker = join(station.dataDir, '..', `${station.dataDir.split('/').pop()}-blocker`);
    writeFileSync(blocker, 'a regular file');
    try {
      const result = await runBackupd(['station', 'serve'], {
        env: {
          DATA_DIR: join(blocker, 'data'),
          HOST: '127.0.0.1',
          PORT: String(await freePort()),
          BACKUP_ROOT: join(blocker, 'snapshots'),
        },
      });
      assert.notEqual(result.code, 0);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? '', /blocker/);
    } finally {
      rmSync(blocker, { force: true });
    }
  });
});

describe('settings', () => {
  test('POST /api/settings returns the normalised settings', async () => {
    const reply = await admin.post('/api/settings', { retention_keep_last: 5 });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.settings.retention_keep_last, 5);
    assert.equal('retention_keep_last' in reply.body, false, 'settings come wrapped in `settings`');
    const overview = await admin.get('/api/overview?section=settings');
    assert.equal(overview.body.settings.retention_keep_last, 5);
  });

  test('omitted fields fall back to the default (30)', async () => {
    assert.equal((await admin.post('/api/settings', { retention_keep_last: 9 })).status, 200);
    const reply = await admin.post('/api/settings', {});
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.settings.retention_keep_last, 30);
    assert.equal((await admin.get('/api/overview')).body.settings.retention_keep_last, 30);
    // An empty body is the empty settings object.
    const empty = await admin.post('/api/settings');
    assert.equal(empty.status, 200, empty.text);
    assert.equal(empty.body.settings.retention_keep_last, 30);
  });

  const invalid: [string, unknown, RegExp][] = [
    ['zero', { retention_keep_last: 0 }, /retention_keep_last/],
    ['negative', { retention_keep_last: -1 }, /retention_keep_last/],
    ['fractional', { retention_keep_last: 1.5 }, /retention_keep_last/],
    ['a string', { retention_keep_last: '5' }, /retention_keep_last/],
    ['null', { retention_keep_last: null }, /retention_keep_last/],
    ['huge', { retention_keep_last: 1e12 }, /retention_keep_last/],
    ['an unknown key', { retention_keep_last: 5, keep_forever: true }, /keep_forever/],
  ];
  for (const [what, body, field] of invalid) {
    test(`${what} is 400 naming the field and changes nothing`, async () => {
      assert.equal((await admin.post('/api/settings', { retention_keep_last: 4 })).status, 200);
      badRequest(await admin.post('/api/settings', body), field);
      assert.equal((await admin.get('/api/overview?section=settings')).body.settings.retention_keep_last, 4);
    });
  }

  test('a body that is not an object is 400', async () => {
    for (const raw of ['[]', '5', '"x"', 'null']) {
      const reply = await admin.post('/api/settings', undefined, { raw });
      assert.equal(reply.status, 400, `${raw}: ${reply.text}`);
      assert.equal(typeof reply.body.detail, 'string');
    }
  });

  test('a non-admin account may read the overview but not save settings', async () => {
    const password = 'operator-first-pw';
    const created = await admin.post('/api/users', { username: 'operator', password, is_admin: false });
    assert.equal(created.status, 201, created.text);
    const operator = new Client(station.url);
    assert.equal((await operator.login('operator', password)).status, 200);
    const early = await operator.post('/api/settings', { retention_keep_last: 2 });
    assert.equal(early.status, 403, early.text);
    assert.match(early.body.detail, /password/);
    const changed = await operator.post('/api/session/change-password', {
      current_password: password,
      new_password: 'operator-second-pw',
      confirm_new_password: 'operator-second-pw',
    });
    assert.equal(changed.status, 200, changed.text);
    const refused = await operator.post('/api/settings', { retention_keep_last: 2 });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.detail, /admin/);
    const overview = await operator.get('/api/overview');
    assert.equal(overview.status, 200, overview.text);
    assert.notEqual(overview.body.settings?.retention_keep_last, 2);
    assert.equal((await new Client(station.url).post('/api/settings', {})).status, 401, 'signed out is 401');
  });
});

describe('overview', () => {
  test('without a section: settings, storage and scouts', async () => {
    const reply = await admin.get('/api/overview');
    assert.equal(reply.status, 200, reply.text);
    assert.equal(typeof reply.body.settings.retention_keep_last, 'number');
    assert.equal(reply.body.storage.backup_root, join(station.dataDir, 'snapshots'));
    assert.equal(reply.body.storage.writable, true);
    assert.equal(typeof reply.body.storage.free_bytes, 'number');
    assert.ok(Array.isArray(reply.body.scouts));
    assert.equal((await new Client(station.url).get('/api/overview')).status, 401);
  });

  test('section=settings, storage or snapshots returns only that section', async () => {
    const settings = await admin.get('/api/overview?section=settings');
    assert.deepEqual(Object.keys(settings.body), ['settings']);
    const storage = await admin.get('/api/overview?section=storage');
    assert.deepEqual(Object.keys(storage.body), ['storage']);
    assert.equal(storage.body.storage.backup_root, join(station.dataDir, 'snapshots'));
    const snapshots = await admin.get('/api/overview?section=snapshots');
    assert.deepEqual(Object.keys(snapshots.body), ['scouts']);
    assert.deepEqual(snapshots.body.scouts, []);
  });

  test('a bad section is 400 naming the parameter', async () => {
    for (const section of ['bogus', 'SETTINGS', 'scouts']) {
      badRequest(await admin.get(`/api/overview?section=${section}`), /section/);
    }
  });
});

describe('broken storage', () => {
  const backupRoot = () => join(station.dataDir, 'snapshots');
  const stagingDir = () => join(station.dataDir, 'staging');

  test('a missing backup root makes /health and /health/ready 503', async () => {
    rmSync(backupRoot(), { recursive: true, force: true });
    try {
      const health = await new Client(station.url).get('/health');
      assert.equal(health.status, 503, health.text);
      assert.equal(health.body.status, 'unavailable');
      assert.equal(health.body.storage.writable, false);
      assert.match(String(health.body.detail), /snapshots/);
      const ready = await new Client(station.url).get('/health/ready');
      assert.equal(ready.status, 503, ready.text);
      assert.equal(ready.body.status, 'unavailable');
      assert.match(ready.body.detail, /snapshots/);
    } finally {
      mkdirSync(backupRoot(), { recursive: true });
    }
    assert.equal(
      (await new Client(station.url).get('/health')).status,
      200,
      'recovers once the folder is back',
    );
  });

  test('a backup root replaced by a regular file makes /health/ready 503', async () => {
    rmSync(backupRoot(), { recursive: true, force: true });
    writeFileSync(backupRoot(), 'not a folder');
    try {
      const ready = await new Client(station.url).get('/health/ready');
      assert.equal(ready.status, 503, ready.text);
      assert.equal(ready.body.status, 'unavailable');
      assert.match(ready.body.detail, /snapshots/);
    } finally {
      rmSync(backupRoot(), { force: true });
      mkdirSync(backupRoot(), { recursive: true });
    }
  });

  test('a backup root replaced by a regular file makes /health 503 (not writable)', async () => {
    rmSync(backupRoot(), { recursive: true, force: true });
    writeFileSync(backupRoot(), 'not a folder');
    try {
      const health = await new Client(station.url).get('/health');
      assert.equal(health.status, 503, `a file cannot hold snapshots, yet /health says: ${health.text}`);
      assert.equal(health.body.status, 'unavailable');
      assert.equal(health.body.storage.writable, false);
      assert.equal(typeof health.body.detail, 'string');
    } finally {
      rmSync(backupRoot(), { force: true });
      mkdirSync(backupRoot(), { recursive: true });
    }
  });

  test('a staging dir replaced by a regular file makes /health/ready 503 naming it', async () => {
    rmSync(stagingDir(), { recursive: true, force: true });
    writeFileSync(stagingDir(), 'not a folder');
    try {
      const ready = await new Client(station.url).get('/health/ready');
      assert.equal(ready.status, 503, ready.text);
      assert.equal(ready.body.status, 'unavailable');
      assert.match(ready.body.detail, /staging/);
    } finally {
      rmSync(stagingDir(), { force: true });
      mkdirSync(stagingDir(), { recursive: true });
    }
    assert.equal((await new Client(station.url).get('/health/ready')).status, 200);
  });
});

describe('restart', () => {
  // A first PGlite start is costly, so one restart covers persistence and the environment:
  // the same data dir starts again with MAX_UPLOAD_BYTES and RETENTION_KEEP_LAST set.
  let tuned: Client;

  test('settings and the upload pause survive a restart; a saved value beats RETENTION_KEEP_LAST', async () => {
    assert.equal((await admin.post('/api/settings', { retention_keep_last: 17 })).status, 200);
    assert.equal((await admin.post('/api/admin/uploads/pause')).status, 200);
    await station.stop();
    station = await startServer('station', {
      dataDir: station.dataDir,
      env: { MAX_UPLOAD_BYTES: '123456789', RETENTION_KEEP_LAST: '7' },
    });
    tuned = await adminClient(station.url);
    const overview = await tuned.get('/api/overview');
    assert.equal(overview.status, 200, overview.text);
    assert.equal(overview.body.settings.retention_keep_last, 17);
    assert.equal(overview.body.storage.uploads_paused, true);
    assert.equal((await tuned.post('/api/admin/uploads/resume')).status, 200);
  });

  test('MAX_UPLOAD_BYTES is reflected in /health and the overview', async () => {
    const health = await new Client(station.url).get('/health');
    assert.equal(health.status, 200, health.text);
    assert.equal(health.body.max_upload_bytes, 123456789);
    const storage = await tuned.get('/api/overview?section=storage');
    assert.equal(storage.body.storage.max_upload_bytes, 123456789);
  });

  test('omitted retention_keep_last falls back to RETENTION_KEEP_LAST', async () => {
    const reset = await tuned.post('/api/settings', {});
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.settings.retention_keep_last, 7, 'RETENTION_KEEP_LAST, not 30');
    const again = await tuned.post('/api/settings', { retention_keep_last: 3 });
    assert.equal(again.body.settings.retention_keep_last, 3);
    assert.equal((await tuned.get('/api/overview?section=settings')).body.settings.retention_keep_last, 3);
  });
});
