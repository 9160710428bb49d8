// Integrity of the stored snapshots: verification (docs/extensions.md, Verification)
// and, across a restart, the kept result and start-up reconciliation with the store. The first
// test sees a Station on which verification never ran; the last section stops the Station,
// edits its store by hand (files on disk, objects in the bucket) and starts it again.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { HOUR_MS } from '../../../src/core/clock.ts';
import type { OverviewScout } from '../../../src/shared/protocol/overview.ts';
import type { VerifyFailure } from '../../../src/shared/protocol/snapshots.ts';
import { assertError } from '../../helpers/assertions.ts';
import { adminClient } from '../../helpers/http.ts';
import {
  onS3,
  putSnapshot,
  removeSnapshot,
  snapshotExists,
  stagingAreas,
  storedBytes,
  storedUnder,
  storeOf,
} from '../../helpers/station-store.ts';
import { archiveMeta, initiate } from '../../helpers/uploads.ts';
import { assertIso, hex64, type StartStation, type Stored, useStoreStation } from './store-kit.ts';

/** What verification reports of one file of a job. */
function failure(at: { scout: string; instance: string; job: string }, filename: string, problem: string) {
  return { scout_id: at.scout, scout_instance_id: at.instance, job_name: at.job, filename, problem };
}

export function snapshotIntegritySuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStoreStation(start);
    const {
      root,
      mintStation,
      store,
      get,
      bearer,
      assertSnapshotDownload,
      overview,
      instanceIn,
      snapshotsOf,
      verify,
      failuresOf,
    } = ctx;

    test('GET /api/admin/verify before any run reports never_run', async () => {
      const reply = await ctx.admin.get('/api/admin/verify');
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.status, 'never_run');
      assert.deepEqual(reply.body.failures ?? [], []);
    });

    describe('verification', () => {
      const at = { scout: 'vf-scout', instance: 'vf-inst-0001', job: 'ledger' };
      let token: string;

      before(async () => {
        token = await mintStation();
        await store(token, at);
      });

      test('POST runs a verification: ok, timestamps, files and bytes checked, no failures', async () => {
        const totals = (await overview('?section=storage')).body.storage;
        const reply = await verify();
        const result = reply.body;
        assert.equal(result.status, 'ok', reply.text);
        const startedAt = assertIso(result.started_at, 'started_at');
        const finishedAt = assertIso(result.finished_at, 'finished_at');
        assert.ok(startedAt <= finishedAt);
        assert.deepEqual(result.failures, []);
        assert.equal(result.checked, totals.snapshot_count);
        assert.equal(result.bytes, totals.snapshot_bytes);
        assert.ok(result.checked >= 1);

        const last = await ctx.admin.get('/api/admin/verify');
        assert.equal(last.status, 200);
        assert.deepEqual(last.body, result);
      });

      test('a read token may GET the result but not run a verification', async () => {
        const read = await ctx.admin.get('/api/admin/verify', { token: ctx.readToken });
        assert.equal(read.status, 200, read.text);
        assert.equal(read.body.status, 'ok');
        assertError(await ctx.admin.post('/api/admin/verify', undefined, { token: ctx.readToken }), 403);
        assertError(await ctx.admin.get('/api/admin/verify', { token: 'bogus-token' }), 401);
      });

      test('a stored file changed by hand (same size) is a checksum_mismatch', async () => {
        const victim = await store(token, at, { size: 4096 });
        const bytes = await storedBytes(ctx.station, at, victim.name);
        for (let i = 100; i < 132; i += 1) bytes[i] = (bytes[i] ?? 0) ^ 0xff;
        assert.ok(await removeSnapshot(ctx.station, at, victim.name));
        await putSnapshot(ctx.station, at, victim.name, bytes);
        assert.equal((await storedBytes(ctx.station, at, victim.name)).length, victim.data.length);

        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, victim.name), [failure(at, victim.name, 'checksum_mismatch')]);
        assert.equal(result.failures.length, 1, JSON.stringify(result.failures));
        assert.deepEqual((await ctx.admin.get('/api/admin/verify')).body, result);
        assert.equal(
          (await ctx.admin.delete(`/api/snapshots/${at.scout}/${at.instance}/${at.job}/${victim.name}`))
            .status,
          200,
        );
      });

      test('an indexed file deleted by hand is missing', async () => {
        const victim = await store(token, at);
        assert.ok(await removeSnapshot(ctx.station, at, victim.name));
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, victim.name), [failure(at, victim.name, 'missing')]);
        assert.equal(result.failures.length, 1, JSON.stringify(result.failures));
        // Removing the record clears the problem.
        const removed = await ctx.admin.delete(
          `/api/snapshots/${at.scout}/${at.instance}/${at.job}/${victim.name}`,
        );
        assert.equal(removed.status, 200, removed.text);
        assert.equal((await verify()).body.status, 'ok');
      });
    });

    describe('restart: verification result and start-up reconciliation', () => {
      const vf = { scout: 'vf-scout', instance: 'vf-inst-0001', job: 'ledger' };
      const rc = { scout: 'rc-scout', instance: 'rc-inst-0001', job: 'projects' };
      const unindexedName = `${vf.job}__2025-06-01T00-00-00Z__abcdef12.tar.zst`;
      const copiedName = 'copied__2025-07-01T08-30-00Z__0badf00d.tar.zst';
      const manualName = 'manual.tar.zst';
      const incomingName = `.incoming-${rc.job}__2025-01-01T00-00-00Z__12345678.tar.zst`;
      const strayUpload = randomBytes(8).toString('hex');
      let token: string;
      let kept: Stored;
      let deleted: Stored;
      let lastResult: unknown;

      before(async () => {
        token = await mintStation();
        kept = await store(token, rc, { size: 3000 });
        deleted = await store(token, rc, { size: 3000 });
      });

      test('an unknown .tar.zst file in an instance job folder is unindexed', async () => {
        await putSnapshot(ctx.station, vf, unindexedName, randomBytes(1234));
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(result.failures, [failure(vf, unindexedName, 'unindexed')]);
        lastResult = result;
      });

      test('after a restart with files changed by hand, the index follows the disk', async () => {
        await ctx.station.stop();
        // By hand while the Station is down: a new archive, an indexed file gone, leftovers (a
        // staging area no upload owns; on disk also a half-written `.incoming-` file: a bucket
        // has no half-written objects).
        const copiedBytes = await storedBytes(ctx.station, rc, kept.name);
        await putSnapshot(ctx.station, { ...rc, job: 'copied' }, copiedName, copiedBytes);
        await putSnapshot(ctx.station, { ...rc, job: 'manual-job' }, manualName, randomBytes(900));
        assert.ok(await removeSnapshot(ctx.station, rc, deleted.name));
        if (!onS3())
          writeFileSync(join(root(), rc.scout, rc.instance, rc.job, incomingName), randomBytes(500));
        await storeOf(ctx.station).beginStaging({
          uploadId: strayUpload,
          target: {
            scoutId: rc.scout,
            instanceId: rc.instance,
            jobName: rc.job,
            filename: `${rc.job}__stray.tar.zst`,
          },
          sizeBytes: 700,
        });
        const [stray, ...others] = await stagingAreas(ctx.station);
        assert.ok(stray !== undefined && others.length === 0, 'the stray staging area is there');

        const t0 = performance.now();
        ctx.station = await ctx.station.restart();
        const restartMs = performance.now() - t0;
        ctx.admin = await adminClient(ctx.station.url);

        // The last verification result survives the restart.
        const last = await ctx.admin.get('/api/admin/verify');
        assert.equal(last.status, 200, last.text);
        assert.deepEqual(last.body, lastResult);

        // Leftovers are gone.
        if (!onS3()) {
          assert.equal(
            existsSync(join(root(), rc.scout, rc.instance, rc.job, incomingName)),
            false,
            '.incoming-* removed',
          );
        }
        if (onS3()) {
          // A multipart upload of no session may be one another Station is creating right now:
          // start-up keeps it while it is young, the sweep removes it once it is a day old.
          assert.deepEqual(await stagingAreas(ctx.station), [stray], 'a young stray upload is kept');
          ctx.station.advanceClock(25 * HOUR_MS);
          const data = randomBytes(100);
          const at = { scout_id: 'rc-sweep', scout_instance_id: 'rc-sweep-0001', job_name: 'trigger' };
          const trigger = await initiate(ctx.station.url, await mintStation(), archiveMeta(data, at));
          assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
          assert.ok(!(await stagingAreas(ctx.station)).includes(stray), 'the sweep removed the stray upload');
        } else {
          assert.deepEqual(await stagingAreas(ctx.station), [], 'the stray staged file was removed');
        }

        // The copied file is indexed and served.
        const copied = (await snapshotsOf(rc.scout, rc.instance, 'copied')).find(
          (s) => s.name === copiedName,
        );
        assert.ok(copied, 'the copied archive is in the overview');
        assert.equal(copied.size_bytes, kept.data.length);
        assertIso(copied.mtime, 'mtime');
        assert.notEqual(copied.missing, true);
        const copiedBase = `/backup/recovery/${rc.scout}/${rc.instance}/copied`;
        assertSnapshotDownload(await get(`${copiedBase}/latest`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        assertSnapshotDownload(await get(`${copiedBase}/archive/${copiedName}`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        assertSnapshotDownload(await get(`${copiedBase}/by-fingerprint?fp=0badf00d`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        // The unindexed file found by verification is indexed now too.
        assert.ok((await snapshotsOf(vf.scout, vf.instance, vf.job)).some((s) => s.name === unindexedName));

        // The deleted file is marked missing (or dropped) and never served.
        const gone = (await snapshotsOf(rc.scout, rc.instance, rc.job)).find((s) => s.name === deleted.name);
        assert.ok(
          gone === undefined || gone.missing === true,
          `deleted file listed as ${JSON.stringify(gone)}`,
        );
        const base = `/backup/recovery/${rc.scout}/${rc.instance}/${rc.job}`;
        assertSnapshotDownload(await get(`${base}/latest`, bearer(token)), kept);
        assertError(await get(`${base}/archive/${deleted.name}`, bearer(token)), 404);
        assertError(await get(`${base}/by-fingerprint?fp=${deleted.meta.fingerprint}`, bearer(token)), 404);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${kept.meta.fingerprint}`, bearer(token)),
          kept,
        );
        const totals = (await overview('?section=storage')).body.storage;
        const live = (await overview('?section=snapshots')).body.scouts as OverviewScout[];
        const liveCount = live
          .flatMap((s) => s.instances)
          .flatMap((i) => i.jobs)
          .flatMap((j) => j.snapshots)
          .filter((s) => !s.missing).length;
        assert.equal(totals.snapshot_count, liveCount, 'a missing file is not counted');
        assert.ok(restartMs > 0);
      });

      test('a reconciled file whose name carries no fingerprint matches no fingerprint', async () => {
        const base = `/backup/recovery/${rc.scout}/${rc.instance}/manual-job`;
        const listed = (await snapshotsOf(rc.scout, rc.instance, 'manual-job')).map((s) => s.name);
        assert.deepEqual(listed, [manualName], 'the hand-placed file is indexed');
        assert.equal((await get(`${base}/latest`, bearer(token))).status, 200);
        const reply = await get(`${base}/by-fingerprint?fp=${hex64()}`, bearer(token));
        assertError(reply, 404);
        assertError(await get(`${base}/by-fingerprint?fp=0a1b2c3d`, bearer(token)), 404);
      });

      test('verification after the restart reports the missing file; instance delete needs cleanup_missing', async () => {
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, deleted.name), [failure(rc, deleted.name, 'missing')]);
        assert.deepEqual(
          result.failures.filter((f: VerifyFailure) => f.problem !== 'missing'),
          [],
          'the copied and formerly unindexed files verify',
        );

        const refused = await ctx.admin.delete(`/api/instances/${rc.scout}/${rc.instance}`);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.body.detail?.cleanup_available, true);
        assert.equal(typeof refused.body.detail?.message, 'string');
        assert.ok(await snapshotExists(ctx.station, rc, kept.name));

        const cleaned = await ctx.admin.delete(
          `/api/instances/${rc.scout}/${rc.instance}?cleanup_missing=true`,
        );
        assert.equal(cleaned.status, 200, cleaned.text);
        assert.equal(await snapshotExists(ctx.station, rc, kept.name), false);
        const inst = await instanceIn(rc.scout, rc.instance);
        assert.deepEqual(inst?.jobs.flatMap((j) => j.snapshots) ?? [], []);
        assert.equal((await verify()).body.status, 'ok');
        // Nothing of the instance is left in the store (on disk: not even a folder).
        assert.deepEqual(await storedUnder(ctx.station, rc.scout), []);
        if (!onS3()) {
          const left = existsSync(join(root(), rc.scout, rc.instance))
            ? readdirSync(join(root(), rc.scout, rc.instance), { recursive: true })
            : [];
          assert.deepEqual(left, []);
        }
      });
    });
  });
}
