// The storage conformance suite on the S3 store against a real Ceph RADOS Gateway, and what only
// the bucket has: tail objects of chunks that end inside a part.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { AbortMultipartUploadCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parseS3Config } from '../../src/core/s3-config.ts';
import { parseState } from '../../src/station/storage/s3-multipart.ts';
import { createS3Store, s3Client } from '../../src/station/storage/s3-store.ts';
import { onCeph } from '../helpers/ceph.ts';
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
      // The caller checks offsets under the upload's lease; the store refuses a wrong one too.
      await assert.rejects(
        store.append(upload, 0, Readable.from([data.subarray(0, 10)])),
        (e: { status?: number; detail?: { next_offset?: number } }) =>
          e.status === 409 && e.detail?.next_offset === 1024 * 1024,
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
});
