// GET /metrics on the Station (docs/extensions.md, Both roles; README, Metrics): who may read it,
// the families it holds, and their values after backups, failed backups, a deletion and a
// verification that finds damage. Runs on PGlite and on PostgreSQL (see the two runner files);
// on PostgreSQL a second Station on the same database must report the same snapshot gauges.
//
// One Station per file, shared by the tests, which run in order. The clock only moves forward.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../../src/core/clock.ts';
import { adminClient, Client, mintAutomationToken } from '../../helpers/http.ts';
import { assertMetricsRefused, type Metrics, sampleValue, scrape } from '../../helpers/metrics.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import type { TestServer } from '../../helpers/server.ts';
import { onS3, putSnapshot, removeSnapshot } from '../../helpers/station-store.ts';
import { archiveMeta, finalize, initiate, putChunk, upload } from '../../helpers/uploads.ts';

const SCOUT = 'metrics-host';
const INSTANCE = 'inst0000000000000042';
const job = (job_name: string) => ({ scout_id: SCOUT, scout_instance_id: INSTANCE, job_name });

const STATION_FAMILIES: Record<string, string> = {
  backupd_snapshots: 'gauge',
  backupd_snapshot_bytes: 'gauge',
  backupd_last_snapshot_timestamp_seconds: 'gauge',
  backupd_storage_free_bytes: 'gauge',
  backupd_uploads_total: 'counter',
  backupd_verify_failures: 'gauge',
  // two of prom-client's default process metrics
  process_cpu_user_seconds_total: 'counter',
  nodejs_heap_size_used_bytes: 'gauge',
};

export function metricsSuite(
  label: string,
  start: () => Promise<TestServer>,
  startPeer?: (env: Record<string, string>) => Promise<TestServer>,
): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    let readToken: string;
    let credential: string;
    const read = () => scrape({ url: station.url, token: readToken });

    before(async () => {
      station = await start();
      admin = await adminClient(station.url);
      readToken = await mintAutomationToken(admin, ['read']);
      credential = await mintStationToken(admin);
    });

    after(async () => {
      await station?.dispose();
    });

    /** Uploads `size` random bytes as a snapshot of `jobName` taken at `timestamp`; expects it stored. */
    async function backup(jobName: string, size: number, timestamp: string): Promise<void> {
      const data = randomBytes(size);
      const meta = archiveMeta(data, { ...job(jobName), timestamp });
      const result = await upload(station.url, credential, data, meta);
      assert.equal(result.finalize?.status, 200, JSON.stringify(result.finalize?.body));
    }

    test('only a read-scope automation token or an admin session reads /metrics', async () => {
      const outsider = new Client(station.url);
      const anonymous = await outsider.get('/metrics');
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.body.detail, /sign in/);
      assert.equal((await outsider.get('/metrics', { token: 'nope' })).status, 401);
      // The Station token of a Scout is not an automation token.
      assert.equal((await outsider.get('/metrics', { token: credential })).status, 401);
      await assertMetricsRefused(outsider, admin);
      await scrape({ url: station.url, token: await mintAutomationToken(admin, ['manage']) });
      await scrape(admin);
      // Beside it, the web UI's catch-all does not answer for /metrics paths.
      const below = await admin.get('/metrics/anything');
      assert.equal(below.status, 404);
      assert.equal(typeof below.body.detail, 'string');
    });

    test('a fresh Station: every family, no snapshots, zero counts', async () => {
      const metrics = await read();
      for (const [name, type] of Object.entries(STATION_FAMILIES)) {
        if (name === 'backupd_storage_free_bytes' && onS3()) continue;
        assert.equal(metrics.get(name)?.type, type, `${name} is a ${type}`);
      }
      assert.deepEqual(metrics.get('backupd_snapshots')?.samples, []);
      for (const result of ['stored', 'checksum_mismatch', 'other']) {
        assert.equal(sampleValue(metrics, 'backupd_uploads_total', { result }), 0, result);
      }
      if (onS3()) {
        assert.equal(
          metrics.get('backupd_storage_free_bytes'),
          undefined,
          'a bucket has no free space to report',
        );
      } else {
        assert.ok((sampleValue(metrics, 'backupd_storage_free_bytes') ?? 0) > 0);
      }
      assert.equal(sampleValue(metrics, 'backupd_verify_failures'), 0);
    });

    test('after backups: count, bytes and time of the newest snapshot per job', async () => {
      // The newer snapshot arrives first: the time is the snapshots' own, not their arrival's.
      await backup('docs', 1500, '2026-03-02T10:20:30Z');
      station.advanceClock(DAY_MS);
      await backup('docs', 1000, '2026-03-01T00:00:00Z');
      await backup('photos', 700, '2026-03-01T08:00:00Z');
      const metrics = await read();
      assert.equal(sampleValue(metrics, 'backupd_snapshots', job('docs')), 2);
      assert.equal(sampleValue(metrics, 'backupd_snapshot_bytes', job('docs')), 2500);
      assert.equal(sampleValue(metrics, 'backupd_snapshots', job('photos')), 1);
      assert.equal(sampleValue(metrics, 'backupd_snapshot_bytes', job('photos')), 700);
      const newest = (name: string) =>
        sampleValue(metrics, 'backupd_last_snapshot_timestamp_seconds', job(name));
      assert.equal(newest('docs'), Date.parse('2026-03-02T10:20:30Z') / 1000);
      assert.equal(newest('photos'), Date.parse('2026-03-01T08:00:00Z') / 1000);
      assert.equal(sampleValue(metrics, 'backupd_uploads_total', { result: 'stored' }), 3);
      assert.equal(metrics.get('backupd_snapshots')?.samples.length, 2, 'one series per job');
    });

    test('failed backups count by result and leave the snapshots as they were', async () => {
      const data = randomBytes(900);
      const damaged = Buffer.from(data);
      damaged[10] = (damaged[10] ?? 0) ^ 0xff;
      const started = await initiate(station.url, credential, archiveMeta(data, job('docs')));
      assert.equal(started.status, 200);
      assert.equal((await putChunk(station.url, credential, started.body.upload_id, 0, damaged)).status, 200);
      const mismatch = await finalize(station.url, credential, started.body.upload_id);
      assert.equal(mismatch.status, 409);
      assert.equal(mismatch.body.detail.status, 'checksum_mismatch');

      const half = randomBytes(800);
      const partial = await initiate(station.url, credential, archiveMeta(half, job('docs')));
      await putChunk(station.url, credential, partial.body.upload_id, 0, half.subarray(0, 400));
      assert.equal((await finalize(station.url, credential, partial.body.upload_id)).status, 409);

      const metrics = await read();
      assert.equal(sampleValue(metrics, 'backupd_uploads_total', { result: 'checksum_mismatch' }), 1);
      assert.equal(sampleValue(metrics, 'backupd_uploads_total', { result: 'other' }), 1);
      assert.equal(sampleValue(metrics, 'backupd_uploads_total', { result: 'stored' }), 3);
      assert.equal(sampleValue(metrics, 'backupd_snapshots', job('docs')), 2);
    });

    if (startPeer) {
      test('a second Station on the same database reports the same snapshots', async () => {
        // Stations on one database share the snapshot folder too (else each marks the other's files missing).
        const peer = await startPeer({ BACKUP_ROOT: join(station.dataDir, 'snapshots') });
        try {
          const peerAdmin = await adminClient(peer.url);
          const mine = await read();
          const theirs = await scrape(peerAdmin);
          for (const name of [
            'backupd_snapshots',
            'backupd_snapshot_bytes',
            'backupd_last_snapshot_timestamp_seconds',
          ]) {
            assert.deepEqual(theirs.get(name)?.samples, mine.get(name)?.samples, name);
          }
          // Finalize outcomes are counted by the process that answered them.
          assert.equal(sampleValue(theirs, 'backupd_uploads_total', { result: 'stored' }), 0);
        } finally {
          await peer.stop();
        }
      });
    }

    test('a deleted job leaves the gauges; a damaged file shows in backupd_verify_failures', async () => {
      const photos = await admin.get('/api/overview?section=snapshots');
      const instance = photos.body.scouts
        .find((s: { scout_id: string }) => s.scout_id === SCOUT)
        .instances.find((i: { scout_instance_id: string }) => i.scout_instance_id === INSTANCE);
      const names = (jobName: string): string[] =>
        instance.jobs
          .find((j: { job_name: string }) => j.job_name === jobName)
          .snapshots.map((s: { name: string }) => s.name);
      const [photo] = names('photos');
      const removed = await admin.delete(`/api/snapshots/${SCOUT}/${INSTANCE}/photos/${photo}`);
      assert.equal(removed.status, 200, removed.text);

      const [doc] = names('docs');
      const docs = { scout: SCOUT, instance: INSTANCE, job: 'docs' };
      assert.ok(await removeSnapshot(station, docs, String(doc)));
      await putSnapshot(station, docs, String(doc), randomBytes(1000));
      const verified = await admin.post('/api/admin/verify');
      assert.equal(verified.status, 200, verified.text);
      assert.equal(verified.body.failures.length, 1);

      const metrics: Metrics = await read();
      assert.equal(
        sampleValue(metrics, 'backupd_snapshots', job('photos')),
        undefined,
        'no series for a job without snapshots',
      );
      assert.equal(sampleValue(metrics, 'backupd_snapshots', job('docs')), 2);
      assert.equal(sampleValue(metrics, 'backupd_verify_failures'), 1);
    });
  });
}
