// `backupd station move-database --to postgres://…`: a Station's embedded database (PGlite)
// moves into an empty PostgreSQL database with the Station stopped; started on DATABASE_URL
// the Station has the same accounts, Station tokens, snapshots and settings.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, adminClient, Client } from '../../helpers/http.ts';
import {
  createDatabase,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../../helpers/postgres.ts';
import { IN_CI } from '../../helpers/programs.ts';
import { mintStationToken, snapshotsOf } from '../../helpers/scout.ts';
import { runBackupd, startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, initiate, upload } from '../../helpers/uploads.ts';

const skip =
  !postgresAvailable() && !IN_CI ? 'PostgreSQL is not installed (apt-get install -y postgresql)' : false;

describe('station move-database', { skip }, () => {
  let pg: PostgresServer;
  let station: TestServer;
  let url: string;
  let credential: string;
  const move = (to: string) =>
    runBackupd(['station', 'move-database', '--to', to, '--data-dir', station.dataDir], { entry: 'dist' });

  before(async () => {
    [pg, station] = await Promise.all([startPostgres(), startServer('station', { entry: 'dist' })]);
    url = await createDatabase(pg.url, 'moved');
    const admin = await adminClient(station.url);
    const created = await admin.post('/api/users', {
      username: 'second',
      password: 'another passphrase',
      is_admin: false,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const saved = await admin.post('/api/settings', { retention_keep_last: 7 });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    credential = await mintStationToken(admin);
    const data = randomBytes(3000);
    const stored = await upload(station.url, credential, data, archiveMeta(data, { job_name: 'moved-job' }));
    assert.equal(stored.finalize?.status, 200, JSON.stringify(stored.finalize?.body));
  });

  after(async () => {
    await station?.dispose();
    await pg?.stop();
  });

  test('refuses while the Station runs, naming it', async () => {
    const result = await move(url);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, new RegExp(String(station.pid)));
  });

  test('refuses a URL that is not PostgreSQL', async () => {
    await station.stop();
    const result = await move('mysql://example/db');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--to must be a postgres/);
  });

  test('copies everything; the Station on PostgreSQL has the same accounts, tokens, snapshots, settings', async () => {
    await station.stop();
    const result = await move(url);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^users: 2 rows$/m);
    assert.match(result.stdout, /^snapshots: 1 rows$/m);
    assert.match(result.stdout, /moved \d+ rows into PostgreSQL/);

    const onPostgres = await startServer('station', {
      entry: 'dist',
      dataDir: station.dataDir,
      env: { DATABASE_URL: url },
    });
    try {
      const health = (await fetch(`${onPostgres.url}/health`).then((r) => r.json())) as {
        database: { kind: string };
      };
      assert.equal(health.database.kind, 'postgres');
      const admin = new Client(onPostgres.url);
      assert.equal((await admin.login('admin', ADMIN_PASSWORD)).status, 200, 'the changed password moved');
      assert.equal((await new Client(onPostgres.url).login('second', 'another passphrase')).status, 200);
      assert.deepEqual((await snapshotsOf(admin, 'moved-job')).length, 1);
      const settings = await admin.get('/api/overview?section=settings');
      assert.equal(settings.body.settings.retention_keep_last, 7);
      const resumed = await initiate(onPostgres.url, credential, archiveMeta(randomBytes(10)));
      assert.equal(resumed.status, 200, 'the Station token still works');
    } finally {
      await onPostgres.stop();
    }
  });

  test('refuses a database that already holds Station data', async () => {
    const result = await move(url);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /already holds Station data: users \(2\)/);
  });
});
