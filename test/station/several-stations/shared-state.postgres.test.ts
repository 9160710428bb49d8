// What several Stations on one PostgreSQL must agree on, at the service level (issue #15
// part 3): the token signing key, rate-limit windows and leases. Each "Station" here is its
// own connection pool on one throwaway PostgreSQL database, as two processes would be; the
// process-level test is two-stations.postgres.test.ts. Without PostgreSQL installed the file
// is skipped, except in CI (CI=true), where that is a failure.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { reserve } from '../../../src/core/auth/rate-limit.ts';
import { openStationDatabase, type StationDatabase } from '../../../src/station/db/open.ts';
import { createLeases } from '../../../src/station/services/leases.ts';
import { createRateWindows } from '../../../src/station/services/rate-windows.ts';
import { LEGACY_KEY_FILE, loadSigningKey } from '../../../src/station/services/signing-key.ts';
import { createDatabase, type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { postgresSkip } from '../../helpers/postgres-runner.ts';

const LABEL = 'shared state of several Stations (PostgreSQL)';
const skip = postgresSkip(LABEL);

const pemOf = (key: { export(o: { type: 'pkcs8'; format: 'pem' }): string | Buffer }) =>
  key.export({ type: 'pkcs8', format: 'pem' }).toString();
const newPem = () => pemOf(generateKeyPairSync('ed25519').privateKey);
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'backupd-shared-state-'));
  dirs.push(dir);
  return dir;
};

describe(LABEL, { skip }, () => {
  let pg: PostgresServer;
  const stations: StationDatabase[] = [];

  /** A fresh database and `n` Stations' pools on it. */
  async function stationsOn(database: string, n: number): Promise<StationDatabase[]> {
    const url = await createDatabase(pg.url, database);
    const opened = [];
    for (let i = 0; i < n; i += 1)
      opened.push(await openStationDatabase({ dataDir: tempDir(), databaseUrl: url }));
    stations.push(...opened);
    return opened;
  }

  before(async () => {
    pg = await startPostgres();
  });

  // Each test's pools close when it ends: the server allows 50 connections and a pool opens up
  // to 10 under parallel queries, so pools kept until the end ran out of connections.
  afterEach(async () => {
    for (const s of stations.splice(0)) await s.close();
  });

  after(async () => {
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('six Stations starting at once on an empty database all migrate it (one schema)', async () => {
    const url = await createDatabase(pg.url, 'start_race');
    const opened = await Promise.all(
      Array.from({ length: 6 }, () => openStationDatabase({ dataDir: tempDir(), databaseUrl: url })),
    );
    stations.push(...opened);
    for (const s of opened) await s.ping();
  });

  describe('token signing key', () => {
    test('two Stations starting at once with their own old key files agree on one key; the winning file is adopted and removed', async () => {
      const [a, b] = await stationsOn('signing_race', 2);
      assert.ok(a && b);
      const dirA = tempDir();
      const dirB = tempDir();
      const pems = [newPem(), newPem()];
      writeFileSync(join(dirA, LEGACY_KEY_FILE), pems[0] ?? '', { mode: 0o600 });
      writeFileSync(join(dirB, LEGACY_KEY_FILE), pems[1] ?? '', { mode: 0o600 });
      const [keyA, keyB] = await Promise.all([
        loadSigningKey(a.stationDb, dirA),
        loadSigningKey(b.stationDb, dirB),
      ]);
      const shared = pemOf(keyA.privateKey);
      assert.equal(pemOf(keyB.privateKey), shared, 'both Stations sign with the same key');
      assert.ok(pems.includes(shared), 'the shared key is one of the old files');
      const adoptedDir = shared === pems[0] ? dirA : dirB;
      const otherDir = shared === pems[0] ? dirB : dirA;
      assert.equal(existsSync(join(adoptedDir, LEGACY_KEY_FILE)), false, 'the adopted file is removed');
      assert.equal(
        existsSync(join(otherDir, LEGACY_KEY_FILE)),
        true,
        'the losing key is left for the operator',
      );
      // A third Station with an empty data dir finds the same key, and writes no file.
      const dirC = tempDir();
      const keyC = await loadSigningKey(a.stationDb, dirC);
      assert.equal(pemOf(keyC.privateKey), shared);
      assert.equal(existsSync(join(dirC, LEGACY_KEY_FILE)), false);
    });

    test('the first Station without a file creates the key once; everyone after reads it', async () => {
      const [a, b] = await stationsOn('signing_fresh', 2);
      assert.ok(a && b);
      const keys = await Promise.all(
        Array.from({ length: 6 }, (_, i) => loadSigningKey((i % 2 ? a : b).stationDb, tempDir())),
      );
      assert.equal(new Set(keys.map((k) => pemOf(k.privateKey))).size, 1);
    });
  });

  describe('rate-limit windows', () => {
    const signIn = { name: 'sign-in', limit: 10, windowMs: 15 * 60 * 1000 };

    test('parallel failed sign-ins on two Stations: exactly 10 are let through in total', async () => {
      const [a, b] = await stationsOn('windows_parallel', 2);
      assert.ok(a && b);
      const onA = createRateWindows(a.stationDb);
      const onB = createRateWindows(b.stationDb);
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => reserve(i % 2 ? onB : onA, [[signIn, '203.0.113.7']])),
      );
      const passed = replies.filter((r) => r.wait === 0);
      assert.equal(passed.length, 10);
      for (const r of replies.filter((r) => r.wait > 0))
        assert.ok(r.wait > 890 && r.wait <= 900, `wait ${r.wait}`);
      // A success taken back on one Station frees a slot seen by the other.
      await passed[0]?.release?.();
      assert.equal((await reserve(onB, [[signIn, '203.0.113.7']])).wait, 0);
      assert.ok((await reserve(onA, [[signIn, '203.0.113.7']])).wait > 0);
      // Other keys are counted apart.
      assert.equal((await reserve(onA, [[signIn, '203.0.113.8']])).wait, 0);
    });

    test('a per-username count on two Stations: counted together, never refusing (issue #23)', async () => {
      const [a, b] = await stationsOn('windows_flagged', 2);
      assert.ok(a && b);
      const onA = createRateWindows(a.stationDb);
      const onB = createRateWindows(b.stationDb);
      const byUser = { name: 'sign-in-user', limit: 10, windowMs: 15 * 60 * 1000, onlyFlags: true };
      const replies = await Promise.all(
        Array.from({ length: 30 }, (_, i) => reserve(i % 2 ? onB : onA, [[byUser, 'admin']])),
      );
      assert.ok(
        replies.every((r) => r.release !== undefined),
        'none refused',
      );
      const flagged = replies.filter((r) => 'flagged' in r && r.flagged.length > 0);
      assert.equal(flagged.length, 20, 'the 20 beyond 10 are flagged, whichever Station counted them');
    });

    test('a window that has ended starts again at 1', async () => {
      const [a] = await stationsOn('windows_expiry', 1);
      assert.ok(a);
      const counter = createRateWindows(a.stationDb);
      assert.equal((await counter.add('k', 300)).count, 1);
      assert.equal((await counter.add('k', 300)).count, 2);
      await new Promise((r) => setTimeout(r, 350));
      const fresh = await counter.add('k', 300);
      assert.equal(fresh.count, 1);
      await counter.takeBack('k', fresh.windowEnd - 1);
      assert.equal((await counter.add('k', 300)).count, 2, 'a take-back for another window changes nothing');
      // Ended windows are pruned; live ones stay.
      await counter.add('long', 60_000);
      await new Promise((r) => setTimeout(r, 350));
      assert.equal(await counter.prune(), 1);
      assert.equal((await counter.add('long', 60_000)).count, 2);
      assert.equal((await counter.add('k', 300)).count, 1);
    });
  });

  describe('leases', () => {
    test('a lease held by one Station is not taken by the other, until it is released', async () => {
      const [a, b] = await stationsOn('leases_held', 2);
      assert.ok(a && b);
      const leaseA = createLeases(a.stationDb, 'station-a');
      const leaseB = createLeases(b.stationDb, 'station-b');
      let release!: () => void;
      const blocker = new Promise<void>((r) => {
        release = r;
      });
      const running = leaseA.exclusive('upload-sweep', async () => {
        await blocker;
        return 'swept by a';
      });
      await new Promise((r) => setTimeout(r, 100));
      let ranOnB = false;
      const onB = await leaseB.exclusive('upload-sweep', async () => {
        ranOnB = true;
      });
      assert.deepEqual(onB, { ran: false, holder: 'station-a' });
      assert.equal(ranOnB, false);
      assert.equal(await leaseB.holderOf('upload-sweep'), 'station-a');
      // Another lease name is free meanwhile.
      assert.deepEqual(await leaseB.exclusive('verify', async () => 1), { ran: true, value: 1 });
      release();
      assert.deepEqual(await running, { ran: true, value: 'swept by a' });
      assert.equal(await leaseA.holderOf('upload-sweep'), null, 'released at the end of the job');
      assert.deepEqual(await leaseB.exclusive('upload-sweep', async () => 'swept by b'), {
        ran: true,
        value: 'swept by b',
      });
    });

    test('a job that fails releases its lease and its error reaches the caller', async () => {
      const [a, b] = await stationsOn('leases_failure', 2);
      assert.ok(a && b);
      const leaseA = createLeases(a.stationDb, 'station-a');
      await assert.rejects(
        leaseA.exclusive('upload-sweep', async () => {
          throw new Error('bucket unreachable');
        }),
        /bucket unreachable/,
      );
      assert.equal(await leaseA.holderOf('upload-sweep'), null);
      assert.deepEqual(
        await createLeases(b.stationDb, 'station-b').exclusive('upload-sweep', async () => 2),
        {
          ran: true,
          value: 2,
        },
      );
    });

    test('only one of many Stations racing for a free lease gets it', async () => {
      const [a, b] = await stationsOn('leases_race', 2);
      assert.ok(a && b);
      const contenders = Array.from({ length: 8 }, (_, i) =>
        createLeases((i % 2 ? b : a).stationDb, `s${i}`),
      );
      const won = await Promise.all(contenders.map((l) => l.acquire('verify', 60_000)));
      assert.equal(won.filter(Boolean).length, 1);
    });

    test('a running job keeps its lease past the TTL (renewed); a dead holder’s lease expires', async () => {
      const [a, b] = await stationsOn('leases_ttl', 2);
      assert.ok(a && b);
      const leaseA = createLeases(a.stationDb, 'station-a');
      const leaseB = createLeases(b.stationDb, 'station-b');
      const long = leaseA.exclusive(
        'verify',
        () => new Promise((r) => setTimeout(() => r('done'), 900)),
        300,
      );
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(await leaseB.acquire('verify', 300), false, 'renewed while the job runs');
      assert.deepEqual(await long, { ran: true, value: 'done' });
      // A holder that dies keeps its row until `until` passes.
      assert.equal(await leaseA.acquire('upload-sweep', 200), true);
      assert.equal(await leaseB.acquire('upload-sweep', 200), false);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await leaseB.acquire('upload-sweep', 200), true, 'taken once expired');
      assert.equal(await leaseB.holderOf('upload-sweep'), 'station-b');
    });
  });
});
