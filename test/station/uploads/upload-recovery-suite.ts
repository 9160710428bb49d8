// A Station under trouble: disk space (507), unusable storage (503), SIGKILL mid-upload with
// a restart, abandoned uploads swept after 24 hours. Its Station has MAX_UPLOAD_BYTES=10^15 so
// that a 500 TB declaration reaches the disk-space check. Runs on PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { HOUR_MS } from '../../../src/core/clock.ts';
import { assertError } from '../../helpers/assertions.ts';
import { Client } from '../../helpers/http.ts';
import { lapseUploadLeases } from '../../helpers/postgres.ts';
import { diskOnly, onS3, stagingAreas } from '../../helpers/station-store.ts';
import { finalize, initiate, putChunk, stalledChunk } from '../../helpers/uploads.ts';
import {
  assertOk,
  assertStoredWhole,
  filesIn,
  HUGE_LIMIT,
  STORED_NAME,
  type StartStation,
  useStation,
} from './uploads-kit.ts';

export function uploadRecoverySuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'aux', { MAX_UPLOAD_BYTES: HUGE_LIMIT });
    const { overviewJob, store, meta } = ctx;

    describe('disk space, unusable storage, crash and abandoned uploads (second Station)', () => {
      let token: string;
      const scout = 'aux-scout';
      const inst = 'aux0000000000001';
      const staging = () => join(ctx.station.dataDir, 'staging');

      before(async () => {
        const reply = await ctx.admin.post('/api/credentials/mint', {});
        assertOk(reply, 201);
        token = reply.body.credential;
      });

      test('a declared size the store cannot take is refused (disk: 507, beyond the free staging space; bucket: 413, beyond 10,000 parts); nothing is staged, no session kept', async () => {
        assert.deepEqual(await stagingAreas(ctx.station), [], 'staging starts empty');
        const data = randomBytes(80_000);
        const key = `key-${randomBytes(8).toString('hex')}`;
        const huge = meta(data, {
          scout_id: scout,
          scout_instance_id: inst,
          job_name: 'big',
          archive_size_bytes: 500 * 1000 ** 4,
          idempotency_key: key,
        });
        const refused = await initiate(ctx.station.url, token, huge);
        if (onS3()) assertError(refused, 413, /bucket.*parts/i);
        else assertError(refused, 507, /space|disk/i);
        assert.deepEqual(await stagingAreas(ctx.station), [], 'nothing left in staging');
        assert.equal((await overviewJob(ctx.admin, scout, inst, 'big'))?.length ?? 0, 0);

        // No session was kept under that key: the same key with other metadata is a new upload.
        const fresh = await initiate(
          ctx.station.url,
          token,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'big', idempotency_key: key }),
        );
        assertOk(fresh);
        assert.equal(fresh.body.next_offset, 0);
        assert.equal(fresh.body.status, 'receiving');
        assertOk(await putChunk(ctx.station.url, token, fresh.body.upload_id, 0, data));
        const fin = await finalize(ctx.station.url, token, fresh.body.upload_id);
        assertOk(fin);
        assert.deepEqual(await stagingAreas(ctx.station), [], 'a stored upload leaves nothing staged');
      });

      test('unusable staging or snapshot storage is 503; usable again afterwards', {
        skip: diskOnly('turns STAGING_DIR and BACKUP_ROOT into files'),
      }, async () => {
        const data = randomBytes(10_000);
        for (const dirName of ['staging', 'snapshots']) {
          const dir = join(ctx.station.dataDir, dirName);
          const moved = `${dir}.moved-away`;
          renameSync(dir, moved);
          writeFileSync(dir, 'not a folder');
          try {
            assertError(
              await initiate(
                ctx.station.url,
                token,
                meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'unusable' }),
              ),
              503,
            );
            assertError(await new Client(ctx.station.url).get('/health/ready'), 503);
          } finally {
            rmSync(dir, { force: true });
            renameSync(moved, dir);
          }
        }
        assertOk(await new Client(ctx.station.url).get('/health/ready'));
        const done = await store(
          ctx.station.url,
          token,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'unusable' }),
        );
        assert.match(done.stored_as, STORED_NAME);
      });

      test('SIGKILL mid-upload: after restart the same idempotency_key resumes where the bytes stopped', async () => {
        const size = 1_500_000;
        const data = randomBytes(size);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'crash' });
        const started = await initiate(ctx.station.url, token, m);
        assertOk(started);
        const id = started.body.upload_id;
        const chunk = 256 * 1024;
        assertOk(await putChunk(ctx.station.url, token, id, 0, data.subarray(0, chunk)));
        assertOk(await putChunk(ctx.station.url, token, id, chunk, data.subarray(chunk, 2 * chunk)));

        // Killed between chunks.
        await ctx.station.kill();
        ctx.station = await ctx.station.restart();
        const afterFirst = await initiate(ctx.station.url, token, m);
        assertOk(afterFirst);
        assert.equal(afterFirst.body.upload_id, id);
        assert.equal(afterFirst.body.next_offset, 2 * chunk);
        assert.equal(afterFirst.body.status, 'receiving');

        // Killed while a chunk is streaming in: part of it has arrived.
        const stagedBefore = await stagingAreas(ctx.station);
        // (the rest never comes)
        const inFlight = stalledChunk(ctx.station.url, token, id, data, 2 * chunk, 300_000);
        // Wait (bounded) until the server has written some of the streamed bytes to its staged
        // file. In a bucket they are in a part that is not complete yet: give them a moment.
        const deadline = Date.now() + (onS3() ? 1000 : 10_000);
        const largest = () =>
          Math.max(0, ...filesIn(staging()).map((f) => statSync(join(staging(), f)).size));
        while (Date.now() < deadline && (onS3() || largest() <= 2 * chunk)) {
          await new Promise((r) => setTimeout(r, 20));
        }
        await ctx.station.kill();
        await inFlight.cancel();
        assert.equal(await inFlight.status, 'failed', 'the streaming request died with the server');
        assert.ok(stagedBefore.length > 0, 'the staging area survived the first restart');
        const onDisk = onS3() ? undefined : largest();
        if (onDisk !== undefined) {
          assert.ok(onDisk > 2 * chunk, `some streamed bytes arrived before the kill (${onDisk})`);
        }

        ctx.station = await ctx.station.restart();
        // On PostgreSQL the killed Station held the upload's write lease, which lapses a minute
        // later on the database's clock: end it there instead of waiting.
        await lapseUploadLeases(ctx.station);
        const afterSecond = await initiate(ctx.station.url, token, m);
        assertOk(afterSecond);
        assert.equal(afterSecond.body.upload_id, id);
        if (onDisk !== undefined) {
          assert.equal(afterSecond.body.next_offset, onDisk, 'next_offset = bytes received before the kill');
        } else {
          // The bucket holds whole parts and the tails of chunks that ended: at least the two
          // chunks, at most what was streamed.
          const next = afterSecond.body.next_offset;
          assert.ok(next >= 2 * chunk && next <= 2 * chunk + 300_000, `next_offset ${next} after the kill`);
        }

        let offset: number = afterSecond.body.next_offset;
        while (offset < size) {
          const reply = await putChunk(
            ctx.station.url,
            token,
            id,
            offset,
            data.subarray(offset, offset + chunk),
          );
          assertOk(reply);
          offset = reply.body.next_offset;
        }
        const fin = await finalize(ctx.station.url, token, id);
        await assertStoredWhole(ctx.station, fin, m, { scout, instance: inst, job: 'crash' }, data);
      });

      test('an upload untouched for 24 h is swept: staged bytes removed, its upload_id is 404', async () => {
        const data = randomBytes(200_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'abandoned' });
        const stagedBefore = new Set(await stagingAreas(ctx.station));
        const started = await initiate(ctx.station.url, token, m);
        assertOk(started);
        const id = started.body.upload_id;
        assertOk(await putChunk(ctx.station.url, token, id, 0, data.subarray(0, 100_000)));
        const mine = (await stagingAreas(ctx.station)).filter((f) => !stagedBefore.has(f));
        assert.equal(mine.length, 1, `one staging area for the upload: ${mine}`);

        ctx.station.advanceClock(25 * HOUR_MS);
        ctx.offset += 25 * HOUR_MS;
        // Any new initiation triggers the sweep.
        const trigger = randomBytes(1000);
        assertOk(
          await initiate(
            ctx.station.url,
            token,
            meta(trigger, { scout_id: scout, scout_instance_id: inst, job_name: 'trigger' }),
          ),
        );

        const left = await stagingAreas(ctx.station);
        for (const f of mine) assert.ok(!left.includes(f), `${f} was removed`);
        assertError(await putChunk(ctx.station.url, token, id, 100_000, data.subarray(100_000)), 404);
        assertError(await finalize(ctx.station.url, token, id), 404);
        const again = await initiate(ctx.station.url, token, m);
        assertOk(again);
        assert.notEqual(again.body.upload_id, id, 'the old key starts a new upload');
        assert.equal(again.body.next_offset, 0);
      });
    });
  });
}
