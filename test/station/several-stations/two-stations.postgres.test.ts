// Two Station processes on one PostgreSQL database, as behind a load balancer (issue #15
// part 3; docs/extensions.md, Storage and several Stations): a Station token
// minted on either is accepted by the other (one signing key, in the database), failed
// sign-ins from one address are counted across both, a verification lease held by one keeps
// the other from running one, and the overview one of them has cached follows a change made
// through the other. Each Station keeps its own disk store here, so bytes go to the first;
// test/e2e/two-stations.test.ts runs the pair on one bucket.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { adminClient, type Client } from '../../helpers/http.ts';
import { loginFrom } from '../../helpers/login-from.ts';
import { createDatabase, type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { postgresSkip } from '../../helpers/postgres-runner.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, initiate, upload } from '../../helpers/uploads.ts';

const LABEL = 'two Stations on one PostgreSQL';

/** A sign-in as admin from a local address of its own (each test uses its own): the status. */
const loginStatus = async (server: TestServer, from: string, password: string) =>
  (await loginFrom(server, from, 'admin', password)).status;

describe(LABEL, { skip: postgresSkip(LABEL) }, () => {
  let pg: PostgresServer;
  let a: TestServer;
  let b: TestServer;
  let adminA: Client;
  let adminB: Client;
  let databaseUrl: string;

  before(async () => {
    pg = await startPostgres();
    databaseUrl = await createDatabase(pg.url, 'two_stations');
    const env = { DATABASE_URL: databaseUrl };
    [a, b] = await Promise.all([startServer('station', { env }), startServer('station', { env })]);
    adminA = await adminClient(a.url);
    adminB = await adminClient(b.url);
  });

  after(async () => {
    await a?.dispose();
    await b?.dispose();
    await pg?.stop();
  });

  test('a Station token minted on either Station is accepted by the other', async () => {
    const fromA = await mintStationToken(adminA);
    const fromB = await mintStationToken(adminB);
    const data = randomBytes(4096);
    const onB = await initiate(b.url, fromA, archiveMeta(data, { scout_id: 'minted-on-a' }));
    assert.equal(onB.status, 200, JSON.stringify(onB.body));
    const stored = await upload(a.url, fromB, data, archiveMeta(data, { scout_id: 'minted-on-b' }));
    assert.equal(stored.finalize?.status, 200, JSON.stringify(stored.finalize?.body));
    // Neither data dir holds a key file: the key lives in the database.
    for (const station of [a, b])
      assert.equal(existsSync(join(station.dataDir, 'station-signing-key.pem')), false);
  });

  test('failed sign-ins from one address are counted across both Stations', async () => {
    const from = '127.0.0.31';
    for (let i = 0; i < 5; i += 1) assert.equal(await loginStatus(a, from, `wrong-a-${i}`), 401);
    for (let i = 0; i < 5; i += 1) assert.equal(await loginStatus(b, from, `wrong-b-${i}`), 401);
    // Ten failures in all: the eleventh attempt is refused on either, even with the password.
    assert.equal(await loginStatus(a, from, 'wrong-again'), 429);
    assert.equal(await loginStatus(b, from, 'correct horse battery'), 429);
    // Another address is not affected.
    assert.equal(await loginStatus(b, '127.0.0.32', 'correct horse battery'), 200);
  });

  test('a verification lease held by one Station is not taken by the other', async () => {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // Another Station is verifying (its lease runs for ten more minutes).
      await sql`INSERT INTO leases (name, holder, until)
                  VALUES ('verify', 'station-elsewhere', (extract(epoch from now()) * 1000)::bigint + 600000)`;
      const refused = await adminB.post('/api/admin/verify');
      assert.equal(refused.status, 200, refused.text);
      assert.equal(refused.body.status, 'running', 'B does not run a second verification');
      assert.equal((await adminA.post('/api/admin/verify')).body.status, 'running');
      assert.equal((await adminB.get('/api/admin/verify')).body.status, 'running', 'and says so when asked');
      const [held] = await sql`SELECT holder FROM leases WHERE name = 'verify'`;
      assert.equal(held?.holder, 'station-elsewhere', 'the lease was not taken');
      // Released: the next request runs one (on A, which holds the bytes), and releases the
      // lease again.
      await sql`DELETE FROM leases WHERE name = 'verify'`;
      const ran = await adminA.post('/api/admin/verify');
      assert.equal(ran.body.status, 'ok', ran.text);
      assert.ok(ran.body.checked >= 1);
      assert.equal((await sql`SELECT 1 FROM leases WHERE name = 'verify'`).length, 0);
      assert.equal((await adminB.get('/api/admin/verify')).body.status, 'ok', 'B reads the result A saved');
    } finally {
      await sql.end();
    }
  });

  test("B's cached overview follows an upload stored through A", async () => {
    const before = await adminB.get('/api/overview');
    assert.equal(before.status, 200);
    const token = await mintStationToken(adminA);
    const data = randomBytes(2048);
    const stored = await upload(a.url, token, data, archiveMeta(data, { scout_id: 'overview-scout' }));
    assert.equal(stored.finalize?.status, 200);
    const afterUpload = await adminB.get('/api/overview');
    const scout = afterUpload.body.scouts?.find((s: { scout_id: string }) => s.scout_id === 'overview-scout');
    assert.ok(scout, `B's overview lists the new Scout: ${afterUpload.text.slice(0, 300)}`);
  });
});
