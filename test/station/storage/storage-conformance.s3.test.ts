// The storage conformance suite on the S3 store against a real Ceph RADOS Gateway, and what only
// the bucket has: tail objects of chunks that end inside a part, and a sweep that leaves other
// software's multipart uploads under the prefix alone.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { parseS3Config } from '../../../src/core/s3-config.ts';
import { parseState } from '../../../src/station/storage/s3-multipart.ts';
import { createS3Store, s3Client } from '../../../src/station/storage/s3-store.ts';
import { StagedOffsetMismatch } from '../../../src/station/storage/store-errors.ts';
import { onCeph } from '../../helpers/ceph.ts';
import { adminClient } from '../../helpers/http.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { startServer } from '../../helpers/server.ts';
import { archiveMeta, initiate, putChunk } from '../../helpers/uploads.ts';
import { storageConformanceSuite } from './storage-conformance-suite.ts';

onCeph('storage conformance (S3 on Ceph)', (ceph) => {
  const configFor = async (prefix: string) => {
    const config = parseS3Config((await ceph()).env('conformance', prefix), (message) => new Error(message));
    if (!config) throw new Error('no S3 configuration');
    return config;
  };

  storageConformanceSuite('storage conformance (S3 on Ceph)', async () => {
    const config = await configFor('station/a');
    return { open: () => createS3Store(config) };
  });

  describe('tail objects (S3 only)', () => {
    test('a chunk that ends inside a part leaves a tail; complete removes it; an orphaned tail is listed and removed', async () => {
      const config = await configFor('tails');
      const store = createS3Store(config);
      const client = s3Client(config);
      const tailObjects = async () =>
        (
          (await client.send(new ListObjectsV2Command({ Bucket: 'conformance', Prefix: 'tails/.staging/' })))
            .Contents ?? []
        ).length;
      const target = {
        scoutId: 'tails',
        instanceId: 'inst-1',
        jobName: 'job',
        filename: 'job__2026__00000001.tar.zst',
      };
      const data = randomBytes(3 * 1024 * 1024);
      let upload = { uploadId: 'u1', target, sizeBytes: data.length, state: null as string | null };
      upload.state = await store.beginStaging(upload);
      const first = await store.append(upload, 0, Readable.from([data.subarray(0, 1024 * 1024)]));
      upload = { ...upload, state: first.state };
      assert.equal(first.stagedBytes, 1024 * 1024);
      assert.equal(await tailObjects(), 1);
      // The caller checks offsets under the upload's lease; the store refuses a wrong one too
      // (its own error: uploads/store-refusals.ts makes the protocol's offset_mismatch of it).
      await assert.rejects(
        store.append(upload, 0, Readable.from([data.subarray(0, 10)])),
        (e: unknown) => e instanceof StagedOffsetMismatch && e.nextOffset === 1024 * 1024,
      );
      const rest = await store.append(upload, first.stagedBytes, Readable.from([data.subarray(1024 * 1024)]));
      upload = { ...upload, state: rest.state };
      await store.complete(upload);
      assert.equal(await tailObjects(), 0, 'complete removes the tails');

      // A Station stopped after the multipart upload ended but before its tails were removed.
      let orphan = {
        uploadId: 'u2',
        target: { ...target, filename: 'job__2026__00000002.tar.zst' },
        sizeBytes: data.length,
        state: null as string | null,
      };
      orphan.state = await store.beginStaging(orphan);
      orphan = {
        ...orphan,
        state: (await store.append(orphan, 0, Readable.from([data.subarray(0, 1000)]))).state,
      };
      const state = parseState(orphan.state);
      await client.send(
        new AbortMultipartUploadCommand({
          Bucket: 'conformance',
          Key: state.key,
          UploadId: state.multipartId,
        }),
      );
      const areas = [];
      for await (const area of store.listStaging()) areas.push(area);
      assert.equal(areas.length, 1);
      assert.equal(areas[0]?.target, null);
      await store.abortStaging(areas[0] ?? orphan);
      assert.equal(await tailObjects(), 0);
    });
  });

  describe('complete on S3', () => {
    test('complete again after the bucket completed it (a Station stopped before saving that) stores nothing new and is not a taken name', async () => {
      const config = await configFor('again');
      const store = createS3Store(config);
      const target = {
        scoutId: 'again',
        instanceId: 'inst-1',
        jobName: 'job',
        filename: 'job__2026-11-25T08-00-00Z__0123abcd.tar.zst',
      };
      const data = randomBytes(3000);
      let upload = { uploadId: 'u1', target, sizeBytes: data.length, state: null as string | null };
      upload.state = await store.beginStaging(upload);
      upload = { ...upload, state: (await store.append(upload, 0, Readable.from([data]))).state };
      assert.equal((await store.complete(upload)).filename, target.filename);
      const again = await createS3Store(config).complete(upload);
      assert.equal(again.filename, target.filename);
      assert.equal(again.sizeBytes, data.length);
    });
  });

  describe('the sweep on S3 (issue #23 item 10)', () => {
    test("another program's multipart upload under the prefix survives the sweep; an abandoned upload of ours is aborted", async () => {
      const gateway = await ceph();
      const env = gateway.env('sweep', 'station');
      const station = await startServer('station', { env });
      try {
        const config = parseS3Config(env, (message) => new Error(message));
        assert.ok(config);
        const client = s3Client(config);
        const uploads = async () =>
          (
            (await client.send(new ListMultipartUploadsCommand({ Bucket: 'sweep', Prefix: 'station/' })))
              .Uploads ?? []
          ).map((u) => u.Key);
        // Other software writing into the same prefix (keys outside the snapshot layout).
        const foreign = ['station/other-app/video.mp4', 'station/a/b/c/not-a-snapshot.bin', 'station/x.bin'];
        for (const Key of foreign)
          await client.send(new CreateMultipartUploadCommand({ Bucket: 'sweep', Key }));
        // A staging area of ours whose Station died before it had a session (a snapshot key).
        const orphan = 'station/host-z/inst-z/job/job__2026-01-01T00-00-00Z__0000beef.tar.zst';
        await client.send(new CreateMultipartUploadCommand({ Bucket: 'sweep', Key: orphan }));
        // An upload of ours that receives a chunk and then nothing.
        const token = await mintStationToken(await adminClient(station.url));
        const data = randomBytes(100_000);
        const started = await initiate(station.url, token, archiveMeta(data, { job_name: 'abandoned' }));
        assert.equal(started.status, 200, JSON.stringify(started.body));
        assert.equal(
          (await putChunk(station.url, token, started.body.upload_id, 0, data.subarray(0, 50_000))).status,
          200,
        );
        const ours = (await uploads()).filter((k) => k?.includes('/abandoned/'));
        assert.equal(ours.length, 1, 'the upload is a multipart upload in the bucket');

        // A day and an hour later every one of them is older than a day; an initiation sweeps.
        station.advanceClock(25 * 60 * 60 * 1000);
        const trigger = randomBytes(1000);
        assert.equal(
          (await initiate(station.url, token, archiveMeta(trigger, { job_name: 'trigger' }))).status,
          200,
        );
        const left = await uploads();
        for (const key of foreign) assert.ok(left.includes(key), `${key} survived the sweep: ${left}`);
        assert.ok(!left.includes(orphan), 'the orphaned staging area of ours was aborted');
        assert.ok(!left.some((k) => k?.includes('/abandoned/')), 'the abandoned upload was aborted');
      } finally {
        await station.dispose();
      }
    });
  });
});
