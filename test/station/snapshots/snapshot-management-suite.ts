// Stored snapshots seen and managed by an admin: the overview, snapshot downloads and deletes,
// and deleting an instance. One Station for the file; each test has its own names.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { OverviewScout, OverviewSnapshot } from '../../../src/shared/protocol/overview.ts';
import { assertError } from '../../helpers/assertions.ts';
import {
  assertStorageShown,
  diskOnly,
  removeSnapshot,
  snapshotExists,
  storeOf,
} from '../../helpers/station-store.ts';
import { assertIso, hex64, type StartStation, type Stored, useStoreStation } from './store-kit.ts';

export function snapshotManagementSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStoreStation(start);
    const {
      root,
      mintStation,
      store,
      get,
      bearer,
      session,
      assertSnapshotDownload,
      overview,
      instanceIn,
      snapshotsOf,
    } = ctx;

    describe('overview', () => {
      const at = { scout: 'ov-scout', instance: 'ov-inst-0001', job: 'photos' };
      const keyFingerprint = hex64();
      const advertisedUrl = 'http://ov-scout.example:6556';
      const stored: Stored[] = [];
      let otherJob: Stored;

      before(async () => {
        const token = await mintStation();
        const extra = { encryption_key_fingerprint: keyFingerprint, advertised_url: advertisedUrl };
        stored.push(await store(token, at, { extra }));
        stored.push(await store(token, at, { extra }));
        otherJob = await store(token, { ...at, job: 'music' }, { extra });
      });

      test('GET /api/overview has settings, storage and the snapshot tree', async () => {
        const now = Date.now();
        const { body } = await overview();
        assert.deepEqual(Object.keys(body).sort(), ['scouts', 'settings', 'storage']);
        assert.equal(typeof body.settings.retention_keep_last, 'number');

        const { storage } = body;
        assertStorageShown(ctx.station, storage, assert);
        const sized = storage.total_bytes !== null;
        for (const field of [
          ...(sized ? ['total_bytes', 'free_bytes', 'used_bytes'] : []),
          'snapshot_count',
          'snapshot_bytes',
        ]) {
          assert.ok(
            Number.isSafeInteger(storage[field]) && storage[field] >= 0,
            `${field}: ${storage[field]}`,
          );
        }
        if (sized) {
          assert.ok(storage.total_bytes > 0);
          assert.ok(storage.free_bytes <= storage.total_bytes);
          assert.ok(storage.used_bytes <= storage.total_bytes);
        } else {
          assert.equal(storage.used_bytes, null, 'no used_bytes without a size');
        }

        // The counts agree with the tree in the same answer.
        const live = (body.scouts as OverviewScout[])
          .flatMap((s) => s.instances)
          .flatMap((i) => i.jobs)
          .flatMap((j) => j.snapshots)
          .filter((s) => !s.missing);
        assert.equal(storage.snapshot_count, live.length);
        assert.equal(
          storage.snapshot_bytes,
          live.reduce((sum, s) => sum + s.size_bytes, 0),
        );

        const scout = (body.scouts as OverviewScout[]).find((s) => s.scout_id === at.scout);
        assert.ok(scout, `scout ${at.scout} in the overview`);
        assert.equal(scout.instances.length, 1);
        const inst = scout.instances[0];
        assert.ok(inst);
        assert.equal(inst.scout_instance_id, at.instance);
        assert.equal(inst.key_fingerprint, keyFingerprint);
        // Pinned to the address the upload came from (issue #23 item 7; hint-target.ts).
        assert.equal(inst.advertised_url, `${advertisedUrl.replace('ov-scout.example', '127.0.0.1')}/`);
        const seen = assertIso(inst.last_seen_at, 'last_seen_at');
        assert.ok(Math.abs(seen - now) < 5 * 60_000, `last_seen_at ${inst.last_seen_at} is recent`);
        assert.deepEqual(inst.jobs.map((j) => j.job_name).sort(), ['music', 'photos']);

        const expectations: [string, Stored[]][] = [
          ['photos', stored],
          ['music', [otherJob]],
        ];
        for (const [job, list] of expectations) {
          const snaps: OverviewSnapshot[] = inst.jobs.find((j) => j.job_name === job)?.snapshots ?? [];
          assert.deepEqual(snaps.map((s) => s.name).sort(), list.map((s) => s.name).sort());
          for (const expected of list) {
            const snap = snaps.find((s) => s.name === expected.name);
            assert.ok(snap);
            assert.match(snap.name, /\.tar\.zst$/);
            assert.equal(snap.size_bytes, expected.data.length);
            const mtime = assertIso(snap.mtime, 'mtime');
            const held = await storeOf(ctx.station).stat({
              scoutId: at.scout,
              instanceId: at.instance,
              jobName: job,
              filename: expected.name,
            });
            assert.ok(held, `${expected.name} is in the store`);
            assert.ok(Math.abs(mtime - held.mtimeMs) < 1000, `mtime ${snap.mtime} matches the store's`);
            assert.notEqual(snap.missing, true);
          }
        }
      });

      test('?section=storage returns only storage, ?section=snapshots only scouts', async () => {
        const storage = await overview('?section=storage');
        assert.deepEqual(Object.keys(storage.body), ['storage']);
        assertStorageShown(ctx.station, storage.body.storage, assert);
        assert.equal(typeof storage.body.storage.snapshot_count, 'number');

        const snapshots = await overview('?section=snapshots');
        assert.deepEqual(Object.keys(snapshots.body), ['scouts']);
        assert.ok((snapshots.body.scouts as OverviewScout[]).some((s) => s.scout_id === at.scout));

        const settings = await overview('?section=settings');
        assert.deepEqual(Object.keys(settings.body), ['settings']);

        assertError(await ctx.admin.get('/api/overview?section=nonsense'), 400);
      });

      test('the overview needs a signed-in operator', async () => {
        const res = await fetch(`${ctx.station.url}/api/overview`);
        assert.equal(res.status, 401);
      });

      test('GET /api/overview latency on a small index (reported)', async (t) => {
        await overview();
        const times: number[] = [];
        for (let i = 0; i < 30; i += 1) {
          const started = performance.now();
          await overview();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
        const count = (await overview('?section=storage')).body.storage.snapshot_count;
        t.diagnostic(
          `GET /api/overview over ${count} snapshots: median ${pick(0.5).toFixed(1)} ms, ` +
            `p95 ${pick(0.95).toFixed(1)} ms, max ${pick(1).toFixed(1)} ms (30 requests)`,
        );
      });
    });

    describe('snapshot management', () => {
      const at = { scout: 'mg-scout', instance: 'mg-inst-0001', job: 'mail' };
      const pathOf = (name: string) => `/api/snapshots/${at.scout}/${at.instance}/${at.job}/${name}`;
      let token: string;
      let older: Stored;
      let newer: Stored;

      before(async () => {
        token = await mintStation();
        older = await store(token, at);
        newer = await store(token, at);
      });

      test('GET downloads the stored bytes with the ctx.admin session', async () => {
        const reply = await get(pathOf(older.name), session());
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('content-length'), String(older.data.length));
        assert.ok(reply.bytes.equals(older.data));
      });

      test('GET works with a restore-scope automation token, not with a read token', async () => {
        const reply = await get(pathOf(newer.name), bearer(ctx.restoreToken));
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.ok(reply.bytes.equals(newer.data));
        assertError(await get(pathOf(newer.name), bearer(ctx.readToken)), 403);
        assertError(await get(pathOf(newer.name)), 401);
        // A Station token grants nothing on /api.
        assertError(await get(pathOf(newer.name), bearer(token)), 401);
      });

      test('DELETE needs an ctx.admin with the manage scope', async () => {
        for (const t of [ctx.readToken, ctx.restoreToken]) {
          const reply = await ctx.admin.delete(pathOf(newer.name), { token: t });
          assertError(reply, 403);
        }
        assert.ok(await snapshotExists(ctx.station, at, newer.name));
      });

      test('DELETE removes the file from disk and the overview', async () => {
        const reply = await ctx.admin.delete(pathOf(newer.name));
        assert.equal(reply.status, 200, reply.text);
        assert.deepEqual(reply.body, { status: 'deleted', filename: newer.name });
        assert.equal(await snapshotExists(ctx.station, at, newer.name), false);
        const names = (await snapshotsOf(at.scout, at.instance, at.job)).map((s) => s.name);
        assert.deepEqual(names, [older.name]);
        assertError(await get(pathOf(newer.name), session()), 404);
        // Recovery falls back to the remaining snapshot.
        const latest = await get(
          `/backup/recovery/${at.scout}/${at.instance}/${at.job}/latest`,
          bearer(token),
        );
        assertSnapshotDownload(latest, older);
      });

      test('DELETE of an unknown snapshot is 404', async () => {
        assertError(await ctx.admin.delete(pathOf(newer.name)), 404);
        assertError(await ctx.admin.delete(pathOf(`${at.job}__2020-01-01T00-00-00Z__00000000.tar.zst`)), 404);
        assertError(
          await ctx.admin.delete(`/api/snapshots/${at.scout}/no-such-instance/${at.job}/${older.name}`),
          404,
        );
        assert.ok(await snapshotExists(ctx.station, at, older.name));
      });

      test('legacy layout: GET and DELETE /api/snapshots/{scout}/{job}/{file}', {
        skip: diskOnly('the legacy <scout>/<job> layout is a folder of BACKUP_ROOT'),
      }, async () => {
        const data = randomBytes(1500);
        const name = 'legacy-job__2019-05-01T10-00-00Z__abcd1234.tar.zst';
        const dir = join(root(), 'legacy-scout', 'legacy-job');
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, name), data);
        const path = `/api/snapshots/legacy-scout/legacy-job/${name}`;

        const reply = await get(path, session());
        assert.equal(reply.status, 200, reply.bytes.toString('utf8', 0, 200));
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('content-length'), String(data.length));
        assert.ok(reply.bytes.equals(data));
        assert.equal((await get(path, bearer(ctx.restoreToken))).status, 200);
        assertError(await get(path, bearer(ctx.readToken)), 403);
        assertError(await get('/api/snapshots/legacy-scout/legacy-job/other.tar.zst', session()), 404);

        const removed = await ctx.admin.delete(path);
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual(removed.body, { status: 'deleted', filename: name });
        assert.equal(existsSync(join(dir, name)), false);
        assertError(await get(path, session()), 404);
        assertError(await ctx.admin.delete(path), 404);
      });

      test('invalid path components are 400 and never reach the disk', async () => {
        // Where `..%2Fdecoy` in the Scout position would lead: <dataDir>/decoy/<job>/<file>.
        const decoyName = 'decoy__2020-01-01T00-00-00Z__00000000.tar.zst';
        const decoyDir = join(ctx.station.dataDir, 'decoy', at.job);
        mkdirSync(decoyDir, { recursive: true });
        writeFileSync(join(decoyDir, decoyName), 'decoy bytes that must never be served');
        writeFileSync(join(decoyDir, '..', decoyName), 'decoy bytes that must never be served');
        const cases: [string, RegExp][] = [
          [`/api/snapshots/.x/${at.instance}/${at.job}/${older.name}`, /scout_id/],
          [`/api/snapshots/${at.scout}/.x/${at.job}/${older.name}`, /scout_instance_id/],
          [`/api/snapshots/${at.scout}/${at.instance}/.x/${older.name}`, /job_name/],
          [`/api/snapshots/${at.scout}/a%2Fb/${at.job}/${older.name}`, /scout_instance_id/],
          [`/api/snapshots/..%2Fdecoy/${at.job}/${decoyName}`, /scout_id/],
          [`/api/snapshots/..%2Fdecoy/x/${at.job}/${decoyName}`, /scout_id/],
          [
            `/api/snapshots/${at.scout}/${at.instance}/${at.job}/..%2F..%2F..%2F..%2Fdecoy%2F${decoyName}`,
            /filename/,
          ],
          [`/api/snapshots/${at.scout}/${at.instance}/${at.job}/.hidden.tar.zst`, /filename/],
          [`/api/snapshots/${at.scout}/${at.instance}/${at.job}/notes.txt`, /filename/],
          [`/api/snapshots/.x/${at.job}/${older.name}`, /scout_id/],
          [`/api/snapshots/${at.scout}/a%2Fb/${older.name}`, /job_name/],
          [`/api/snapshots/${at.scout}/${at.job}/..%2F..%2F..%2Fdecoy.tar.zst`, /filename/],
        ];
        const problems: string[] = [];
        for (const [path, field] of cases) {
          for (const method of ['GET', 'DELETE'] as const) {
            const reply =
              method === 'GET'
                ? await get(path, session())
                : await ctx.admin
                    .delete(path)
                    .then((r) => ({ status: r.status, json: r.body, bytes: Buffer.from(r.text) }));
            assert.ok(
              !reply.bytes.toString('utf8').includes('decoy bytes'),
              `${method} ${path} served the decoy`,
            );
            const detail = JSON.stringify(reply.json?.detail ?? '');
            if (reply.status !== 400 || !field.test(detail)) {
              problems.push(`${method} ${path}: expected 400 naming ${field}, got ${reply.status} ${detail}`);
            }
          }
        }
        assert.ok(existsSync(join(decoyDir, decoyName)), 'the decoy was not deleted');
        assert.ok(existsSync(join(decoyDir, '..', decoyName)), 'the decoy was not deleted');
        assert.ok(await snapshotExists(ctx.station, at, older.name));
        rmSync(join(ctx.station.dataDir, 'decoy'), { recursive: true, force: true });
        assert.deepEqual(problems, []);
      });
    });

    describe('instance deletion', () => {
      const scout = 'del-scout';

      test('DELETE /api/instances/{scout}/{instance} removes every snapshot; the token still works', async () => {
        const at = { scout, instance: 'del-inst-0001', job: 'alpha' };
        const token = await mintStation();
        const a1 = await store(token, at);
        const a2 = await store(token, at);
        const b1 = await store(token, { ...at, job: 'beta' });
        // A neighbour instance of the same Scout stays untouched.
        const neighbour = await store(await mintStation(), { ...at, instance: 'del-inst-0002' });
        for (const [job, s] of [
          ['alpha', a1],
          ['alpha', a2],
          ['beta', b1],
        ] as const) {
          assert.ok(await snapshotExists(ctx.station, { ...at, job }, s.name));
        }

        assertError(
          await ctx.admin.delete(`/api/instances/${scout}/${at.instance}`, { token: ctx.readToken }),
          403,
        );
        const reply = await ctx.admin.delete(`/api/instances/${scout}/${at.instance}`);
        assert.equal(reply.status, 200, reply.text);
        for (const [job, s] of [
          ['alpha', a1],
          ['alpha', a2],
          ['beta', b1],
        ] as const) {
          assert.equal(await snapshotExists(ctx.station, { ...at, job }, s.name), false, `${s.name} is gone`);
        }
        const inst = await instanceIn(scout, at.instance);
        assert.deepEqual(inst?.jobs.flatMap((j) => j.snapshots) ?? [], [], 'no snapshots in the overview');
        assert.ok(
          await snapshotExists(
            ctx.station,
            { ...at, instance: 'del-inst-0002', job: 'alpha' },
            neighbour.name,
          ),
        );
        assert.equal((await snapshotsOf(scout, 'del-inst-0002', 'alpha')).length, 1);
        assertError(await get(`/backup/recovery/${scout}/${at.instance}/alpha/latest`, bearer(token)), 404);

        // Deleting an instance does not revoke its Station token.
        const again = await store(token, at);
        assertSnapshotDownload(
          await get(`/backup/recovery/${scout}/${at.instance}/alpha/latest`, bearer(token)),
          again,
        );
        assert.deepEqual(
          (await snapshotsOf(scout, at.instance, 'alpha')).map((s) => s.name),
          [again.name],
        );
      });

      test('DELETE of an unknown instance is 404; invalid components are 400', async () => {
        assertError(await ctx.admin.delete(`/api/instances/${scout}/never-existed`), 404);
        assertError(await ctx.admin.delete('/api/instances/nobody-here/never-existed'), 404);
        assertError(await ctx.admin.delete(`/api/instances/.x/never-existed`), 400, /scout_id/);
        assertError(await ctx.admin.delete(`/api/instances/${scout}/a%2Fb`), 400, /scout_instance_id/);
      });

      test('with an indexed file missing: 409 with cleanup_available, then cleanup_missing=true', async () => {
        const at = { scout, instance: 'del-inst-0003', job: 'gamma' };
        const token = await mintStation();
        const kept = await store(token, at);
        const lost = await store(token, at);
        assert.ok(await removeSnapshot(ctx.station, at, lost.name));

        const refused = await ctx.admin.delete(`/api/instances/${scout}/${at.instance}`);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(typeof refused.body.detail, 'object', refused.text);
        assert.equal(typeof refused.body.detail.message, 'string');
        assert.ok(refused.body.detail.message.length > 0);
        assert.equal(refused.body.detail.cleanup_available, true);
        // A refused deletion deletes nothing.
        assert.ok(await snapshotExists(ctx.station, at, kept.name));
        assert.equal((await snapshotsOf(scout, at.instance, at.job)).length, 2);

        assertError(
          await ctx.admin.delete(`/api/instances/${scout}/${at.instance}?cleanup_missing=false`),
          409,
        );
        const cleaned = await ctx.admin.delete(`/api/instances/${scout}/${at.instance}?cleanup_missing=true`);
        assert.equal(cleaned.status, 200, cleaned.text);
        assert.equal(await snapshotExists(ctx.station, at, kept.name), false);
        assert.deepEqual(await snapshotsOf(scout, at.instance, at.job), []);
        assertError(
          await get(`/backup/recovery/${scout}/${at.instance}/${at.job}/latest`, bearer(token)),
          404,
        );
      });
    });
  });
}
