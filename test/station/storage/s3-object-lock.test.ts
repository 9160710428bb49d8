// S3 Object Lock on a real Ceph RADOS Gateway (issue 25 item 4): the Station creates its bucket
// with object lock, puts COMPLIANCE retention (stored time + S3_OBJECT_LOCK_DAYS) on each stored
// snapshot's version, refuses to start on a bucket without lock, never tries to delete a
// snapshot before its date, and reports (keeps) one the bucket still refuses after it.
//
// "After its date" honestly: the bucket's clock cannot be moved and COMPLIANCE cannot be
// shortened by anyone (nor may the Station bypass GOVERNANCE), so with S3_OBJECT_LOCK_DAYS=1
// the test checks that before the date retention leaves the snapshot alone, and that once the
// Station's clock is two days on, retention tries, the bucket (still inside its day) refuses,
// and the Station keeps the snapshot indexed and says so in its log: it is pruned by the first
// upload after the bucket's date, like any other snapshot the policy does not keep.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectRetentionCommand,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DAY_MS, HOUR_MS } from '../../../src/core/clock.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { type CephS3, onCeph } from '../../helpers/ceph.ts';
import { adminClient } from '../../helpers/http.ts';
import { KEEP_NEWEST_ONLY } from '../../helpers/retention.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { runBackupd, startServer } from '../../helpers/server.ts';
import { archiveMeta, upload } from '../../helpers/uploads.ts';

const LOCK = { S3_OBJECT_LOCK: 'compliance', S3_OBJECT_LOCK_DAYS: '1' };

/** An S3 client with the keys the Station uses. */
const bucketClient = (s3: CephS3) =>
  new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });

onCeph('S3 Object Lock (Ceph)', (ceph) => {
  test('a bucket without object lock: the Station refuses to start, in one line', async () => {
    const s3 = await ceph();
    const client = bucketClient(s3);
    await client.send(new CreateBucketCommand({ Bucket: 'nolock' }));
    const run = await runBackupd(['station', 'serve'], {
      env: { ...s3.env('nolock'), ...LOCK, DATA_DIR: s3.dir, PORT: '0', HOST: '127.0.0.1' },
    });
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr
      .trim()
      .split('\n')
      .filter((l) => /object lock/.test(l));
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0] ?? '', /S3_OBJECT_LOCK=compliance but bucket nolock has no object lock/);
  });

  test('each snapshot is locked until stored time + 1 day; retention skips it before and reports the bucket refusing after', async () => {
    const s3 = await ceph();
    const client = bucketClient(s3);
    const station = await startServer('station', { env: { ...s3.env('locked'), ...LOCK } });
    let offset = 0;
    const move = (ms: number) => {
      station.advanceClock(ms);
      offset += ms;
    };
    try {
      let admin = await adminClient(station.url);
      assert.equal((await admin.post('/api/settings', KEEP_NEWEST_ONLY)).status, 200);
      const token = await mintStationToken(admin);
      const job = { scout_id: 'host-l', scout_instance_id: 'instl00000000001', job_name: 'ledger' };
      const store = async () => {
        const data = randomBytes(300);
        const done = await upload(
          station.url,
          token,
          data,
          archiveMeta(data, { ...job, timestamp: utcSecond(Date.now() + offset - 60_000) }),
        );
        assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body ?? done.initiate.body));
        return done.finalize?.body as { stored_as: string; pruned: string[] };
      };
      const listed = async () => {
        const reply = await admin.get('/api/overview?section=snapshots');
        const found = reply.body.scouts
          .find((s: { scout_id: string }) => s.scout_id === job.scout_id)
          ?.instances[0]?.jobs.find((j: { job_name: string }) => j.job_name === job.job_name);
        return (found?.snapshots ?? []) as Array<{
          name: string;
          stored_at: string;
          locked_until: string | null;
        }>;
      };
      const keyOf = (name: string) => `${job.scout_id}/${job.scout_instance_id}/${job.job_name}/${name}`;

      // Store the first at noon UTC by the Station's clock, the second early the next day: a
      // snapshot stored today is kept as today's first (no flush), so only the next day does
      // keep_last 1 let retention look at it, still inside its day of lock (the test used to
      // pass only when started late enough in a UTC day for +2 h to reach the next one).
      const now = Date.now();
      const noon = Date.UTC(
        new Date(now).getUTCFullYear(),
        new Date(now).getUTCMonth(),
        new Date(now).getUTCDate(),
        12,
      );
      move((noon > now ? noon : noon + DAY_MS) - now);
      const first = await store();
      const [shown] = await listed();
      assert.ok(shown?.locked_until, 'the overview shows locked_until');
      // Stored time + 1 day: the store sets it as it completes the object, just before indexing.
      const lead = Date.parse(shown.locked_until) - Date.parse(shown.stored_at);
      assert.ok(lead <= DAY_MS && lead > DAY_MS - 60_000, `locked ${lead} ms after stored`);
      const versions = await client.send(
        new ListObjectVersionsCommand({ Bucket: 'locked', Prefix: keyOf(first.stored_as) }),
      );
      const version = versions.Versions?.[0]?.VersionId;
      assert.ok(version, 'the bucket keeps versions');
      const retention = await client.send(
        new GetObjectRetentionCommand({ Bucket: 'locked', Key: keyOf(first.stored_as), VersionId: version }),
      );
      assert.equal(retention.Retention?.Mode, 'COMPLIANCE');

      // The Station's own credentials cannot delete the stored version; the API says 409 locked.
      await assert.rejects(
        client.send(
          new DeleteObjectCommand({ Bucket: 'locked', Key: keyOf(first.stored_as), VersionId: version }),
        ),
        (error: Error & { $metadata?: { httpStatusCode?: number } }) =>
          error.$metadata?.httpStatusCode === 403,
      );
      const refused = await admin.delete(
        `/api/snapshots/${job.scout_id}/${job.scout_instance_id}/${job.job_name}/${first.stored_as}`,
      );
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'locked');

      // Before its date: keep_last 1 does not keep it, and retention leaves it alone.
      move(13 * HOUR_MS);
      const second = await store();
      assert.deepEqual(second.pruned, []);
      assert.deepEqual(
        (await listed()).map((s) => s.name).sort(),
        [first.stored_as, second.stored_as].sort(),
      );
      assert.match(station.output(), /retention left snapshots whose objects are still locked/);

      // Two days on by the Station's clock (the bucket's own clock did not move): retention
      // tries, the bucket refuses, the Station reports it and keeps both indexed.
      move(2 * DAY_MS);
      admin = await adminClient(station.url);
      const third = await store();
      assert.deepEqual(third.pruned, []);
      assert.match(station.output(), /retention could not delete a snapshot: the bucket still locks it/);
      assert.deepEqual(
        (await listed()).map((s) => s.name).sort(),
        [first.stored_as, second.stored_as, third.stored_as].sort(),
      );
      const still = await client.send(
        new ListObjectVersionsCommand({ Bucket: 'locked', Prefix: keyOf(first.stored_as) }),
      );
      assert.equal(still.Versions?.length, 1, 'the locked version is still in the bucket');
    } finally {
      await station.dispose();
    }
  });
});
