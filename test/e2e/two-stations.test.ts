// Two Stations, one PostgreSQL, one bucket (issue #15 part 4, docs/extensions.md, Storage and
// several Stations: one DATABASE_URL and one STORAGE_URL behind a load balancer). The chunks
// of one upload alternate between the Stations; the one receiving a chunk is killed with
// SIGKILL half way through it; the upload resumes on the other from what the bucket holds and
// is stored exactly once with the right bytes (one object, no multipart upload left, SHA-256
// of a download from either Station). Then a Scout backs up through one Station and restores
// through the other. Needs PostgreSQL and the Ceph RADOS Gateway (test/helpers/ceph.ts):
// skipped without them, a failure in CI.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetBucketLifecycleConfigurationCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketLifecycleConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { uploadPaths } from '../../src/shared/protocol/paths.ts';
import { type CephS3, onCeph } from '../helpers/ceph.ts';
import { buildTree, jobTree } from '../helpers/files.ts';
import { sha256 } from '../helpers/hashes.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import {
  createDatabase,
  lapseUploadLeases,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../helpers/postgres.ts';
import {
  backupJob,
  mintStationToken,
  type RunningScout,
  saveStationSettings,
  scoutStatus,
  startScout,
} from '../helpers/scout.ts';
import { ROOT, startServer, type TestServer } from '../helpers/server.ts';
import { archiveMeta, finalize, initiate, putChunk } from '../helpers/uploads.ts';

const LABEL = 'two Stations on one PostgreSQL and one bucket';
const MIB = 1024 * 1024;
const BUCKET = 'two-stations';
const inCi = process.env.CI === 'true';

/** Starts a PUT of `bytes` at `offset`, sends the first `sendFirst` bytes, and leaves it hanging. */
function startHangingChunk(
  url: string,
  token: string,
  uploadId: string,
  offset: number,
  bytes: Uint8Array,
  sendFirst: number,
) {
  const req = request(`${url}${uploadPaths.chunk(uploadId, offset)}`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/octet-stream',
      'content-length': bytes.length,
    },
  });
  const ended = new Promise<string>((resolve) => {
    req.on('error', (error) => resolve(`error: ${error.message}`));
    req.on('response', (res) => {
      res.resume();
      resolve(`answered ${res.statusCode}`);
    });
  });
  req.write(bytes.subarray(0, sendFirst));
  return ended;
}

async function download(
  url: string,
  admin: Client,
  path: string,
): Promise<{ status: number; sha: string; size: number }> {
  const res = await fetch(`${url}${path}`, { headers: { cookie: admin.cookieHeader() } });
  const hash = createHash('sha256');
  let size = 0;
  if (!res.body) return { status: res.status, sha: '', size: 0 };
  for await (const chunk of res.body) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { status: res.status, sha: hash.digest('hex'), size };
}

if (!postgresAvailable()) {
  if (inCi)
    test(`${LABEL}: PostgreSQL is available in CI`, () => {
      assert.fail('CI=true but PostgreSQL (initdb, pg_ctl) is not available');
    });
  else test(LABEL, { skip: 'PostgreSQL is not installed; skipping' }, () => {});
} else {
  onCeph(LABEL, (startCeph) => {
    describe(LABEL, () => {
      let ceph: CephS3;
      let pg: PostgresServer;
      let a: TestServer;
      let b: TestServer;
      let adminA: Client;
      let adminB: Client;
      let s3: S3Client;
      let scout: RunningScout | undefined;

      before(async () => {
        [ceph, pg] = await Promise.all([startCeph(), startPostgres()]);
        const env = { DATABASE_URL: await createDatabase(pg.url, 'two_stations_s3'), ...ceph.env(BUCKET) };
        [a, b] = await Promise.all([startServer('station', { env }), startServer('station', { env })]);
        adminA = await adminClient(a.url);
        adminB = await adminClient(b.url);
        s3 = new S3Client({
          endpoint: ceph.endpoint,
          region: ceph.region,
          forcePathStyle: true,
          credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
        });
      });

      after(async () => {
        s3?.destroy();
        await scout?.server.dispose();
        await a?.dispose();
        await b?.dispose();
        await pg?.stop();
      });

      test('chunks alternate between the Stations; one is killed mid-chunk; the other finishes; stored once with the right bytes', async () => {
        const token = await mintStationToken(adminA);
        // Four whole parts and a short last one.
        const data = randomBytes(4 * 16 * MIB + 3 * MIB);
        const meta = archiveMeta(data, { scout_id: 'pair-scout', job_name: 'big' });
        const started = await initiate(b.url, token, meta);
        assert.equal(started.status, 200, JSON.stringify(started.body));
        const uploadId: string = started.body.upload_id;
        // The Station asks for chunks of four 16 MiB parts; chunks of one part are taken as well.
        assert.equal(started.body.recommended_chunk_size_bytes, 4 * 16 * MIB, 'four parts per chunk');
        const part = 16 * MIB;

        // Chunk 0 to A, chunk 1 to B.
        let offset = 0;
        for (const station of [a, b]) {
          const reply = await putChunk(
            station.url,
            token,
            uploadId,
            offset,
            data.subarray(offset, offset + part),
          );
          assert.equal(reply.status, 200, JSON.stringify(reply.body));
          offset = reply.body.next_offset;
        }
        assert.equal(offset, 2 * part);

        // Chunk 2 to A, which dies with half of it received.
        const hanging = startHangingChunk(
          a.url,
          token,
          uploadId,
          offset,
          data.subarray(offset, offset + part),
          part / 2,
        );
        await sleep(1500);
        await a.kill();
        assert.match(await hanging, /^error/, 'the killed Station never answered');

        // A held the upload's write lease; it lapses a minute after A's last renewal on the
        // database's clock. The test ends it there instead of waiting for it.
        await lapseUploadLeases(b);
        const resumed = await initiate(b.url, token, meta);
        assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
        assert.equal(resumed.body.upload_id, uploadId, 'the same upload resumes');
        assert.equal(
          resumed.body.next_offset,
          2 * part,
          'the bucket holds the two whole parts, not the half',
        );
        offset = resumed.body.next_offset;
        while (offset < data.length) {
          const reply = await putChunk(b.url, token, uploadId, offset, data.subarray(offset, offset + part));
          assert.equal(reply.status, 200, JSON.stringify(reply.body));
          offset = reply.body.next_offset;
        }
        const done = await finalize(b.url, token, uploadId);
        assert.equal(done.status, 200, JSON.stringify(done.body));
        assert.equal(done.body.status, 'stored');
        const storedAs: string = done.body.stored_as;

        // Exactly one object for the job, complete, and no multipart upload left behind.
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'pair-scout/' }));
        const objects = listed.Contents ?? [];
        assert.equal(objects.length, 1, JSON.stringify(objects.map((o) => o.Key)));
        assert.equal(objects[0]?.Key, `pair-scout/${meta.scout_instance_id}/big/${storedAs}`);
        assert.equal(objects[0]?.Size, data.length);
        const multipart = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
        assert.deepEqual(multipart.Uploads ?? [], [], 'no multipart upload left in the bucket');

        // The right bytes, from B and from A once it is back.
        const path = `/api/snapshots/pair-scout/${meta.scout_instance_id}/big/${encodeURIComponent(storedAs)}`;
        const fromB = await download(b.url, adminB, path);
        assert.deepEqual(fromB, { status: 200, sha: sha256(data), size: data.length });
        a = await a.restart();
        adminA = await adminClient(a.url);
        const fromA = await download(a.url, adminA, path);
        assert.deepEqual(fromA, { status: 200, sha: sha256(data), size: data.length });
        // Sending it again (same idempotency key) stores nothing new.
        const again = await initiate(a.url, token, meta);
        assert.equal(again.body.status, 'stored');
        const relisted = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'pair-scout/' }));
        assert.equal(relisted.KeyCount, 1);
      });

      test('a Scout backs up through one Station and restores through the other', async () => {
        scout = await startScout({
          prefix: 'backupd-two-stations-scout-',
          fill: (scan) => {
            buildTree(join(scan, 'docs'), {
              '.upload_dir': '',
              'a.txt': 'first version',
              'sub/b.bin': randomBytes(200_000),
            });
          },
        });
        const credential = await mintStationToken(adminB);
        await saveStationSettings(scout.admin, a.url, credential, 'scout-two');
        const docs = join(scout.scanRoot, 'docs');
        const original = jobTree(docs);
        const stored = await backupJob(scout.admin, 'docs');
        const instance = (await scoutStatus(scout.admin)).scout_instance_id;
        const listed = await s3.send(
          new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `scout-two/${instance}/docs/` }),
        );
        assert.deepEqual(
          (listed.Contents ?? []).map((o) => o.Key),
          [`scout-two/${instance}/docs/${stored}`],
        );

        // Damage the job locally, point the Scout at B, and restore.
        buildTree(docs, { 'a.txt': 'overwritten by mistake' });
        await saveStationSettings(scout.admin, b.url, credential, 'scout-two');
        const restored = await scout.admin.post('/api/recovery/restore', { relative_path: 'docs' });
        assert.equal(restored.status, 200, restored.text);
        assert.equal(restored.body.status, 'restored');
        assert.deepEqual(jobTree(docs), original);
      });

      test("the operator's guide's lifecycle rule is accepted by the bucket", async () => {
        const guide = readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');
        const block = [...guide.matchAll(/```json\n([\s\S]*?)```/g)]
          .map((m) => JSON.parse(m[1] ?? '{}'))
          .find((b) => b.Rules);
        assert.ok(block, 'the guide holds a lifecycle configuration');
        await s3.send(
          new PutBucketLifecycleConfigurationCommand({ Bucket: BUCKET, LifecycleConfiguration: block }),
        );
        const read = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: BUCKET }));
        assert.equal(read.Rules?.[0]?.AbortIncompleteMultipartUpload?.DaysAfterInitiation, 7);
      });
    });
  });
}
