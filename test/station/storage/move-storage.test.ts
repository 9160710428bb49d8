// `backupd station move-storage --to s3://…`: the snapshots of a disk store move into a bucket
// (a real Ceph RADOS Gateway), each checked against the index's SHA-256; a second run skips what
// is there; a damaged file is refused; a Station on the bucket then serves the moved snapshots.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseS3Config } from '../../../src/core/s3-config.ts';
import { instancePaths } from '../../../src/shared/protocol/paths.ts';
import { createS3Store } from '../../../src/station/storage/s3-store.ts';
import { onCeph } from '../../helpers/ceph.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { adminClient } from '../../helpers/http.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { runBackupd, startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, upload } from '../../helpers/uploads.ts';

onCeph('station move-storage', (ceph) => {
  let station: TestServer;
  let credential: string;
  const archives = [
    { job: 'small', data: randomBytes(3000) },
    { job: 'medium', data: randomBytes(200_000) },
    { job: 'large', data: randomBytes(17 * 1024 * 1024 + 5) }, // two parts in the bucket
  ];
  const stored = new Map<string, string>();
  const move = async (to: string) =>
    runBackupd(['station', 'move-storage', '--to', to, '--data-dir', station.dataDir], {
      env: (await ceph()).env('unused'),
    });
  const bucketStore = async (prefix: string) => {
    const config = parseS3Config((await ceph()).env('moved', prefix), (m) => new Error(m));
    assert.ok(config);
    return createS3Store(config);
  };

  before(async () => {
    [station] = await Promise.all([startServer('station'), ceph()]);
    const admin = await adminClient(station.url);
    credential = await mintStationToken(admin);
    for (const { job, data } of archives) {
      const sent = await upload(
        station.url,
        credential,
        data,
        archiveMeta(data, { job_name: job }),
        4 * 1024 * 1024,
      );
      assert.equal(sent.finalize?.status, 200, JSON.stringify(sent.finalize?.body));
      stored.set(job, sent.finalize?.body.stored_as);
    }
    await station.stop();
  });

  after(async () => {
    await station?.dispose();
  });

  test('refuses a --to that is not an s3:// URL', async () => {
    const result = await move('/mnt/elsewhere');
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--to must look like s3:\/\/BUCKET/);
  });

  test('copies every snapshot, verified; a second run skips them', async () => {
    const first = await move('s3://moved/site-a');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^3 copied \(.* (B|KiB|MiB) in .* s\), 0 already there, 0 failed, into s3:\/\/moved\/site-a\/$/m,
    );
    assert.match(first.stdout, /\[3\/3\] copied /);

    const bucket = await bucketStore('site-a');
    const listed = new Map<string, number>();
    for await (const file of bucket.list()) listed.set(file.jobName, file.sizeBytes);
    assert.deepEqual(
      Object.fromEntries(listed),
      Object.fromEntries(archives.map((a) => [a.job, a.data.length])),
    );
    for (const { job, data } of archives) {
      const key = {
        scoutId: 'host-a',
        instanceId: 'inst0000000000000001',
        jobName: job,
        filename: stored.get(job) ?? '',
      };
      const chunks: Buffer[] = [];
      for await (const chunk of await bucket.read(key)) chunks.push(chunk as Buffer);
      assert.equal(sha256(Buffer.concat(chunks)), sha256(data), `${job} arrived intact`);
    }

    const again = await move('s3://moved/site-a');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^0 copied .*, 3 already there, 0 failed/m);
  });

  test('a snapshot whose bytes no longer match the index is refused; the others are copied', async () => {
    const medium = join(
      station.dataDir,
      'snapshots',
      'host-a',
      'inst0000000000000001',
      'medium',
      stored.get('medium') ?? '',
    );
    const bytes = await readFile(medium);
    bytes[1000] = (bytes[1000] ?? 0) ^ 0xff;
    await writeFile(medium, bytes);

    const result = await move('s3://moved/site-b');
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /FAILED host-a\/inst0000000000000001\/medium\/.*: checksum_mismatch/);
    assert.match(result.stdout, /^2 copied .*, 0 already there, 1 failed/m);
    assert.match(result.stderr, /1 snapshots were not copied/);
    const jobs: string[] = [];
    for await (const file of (await bucketStore('site-b')).list()) jobs.push(file.jobName);
    assert.deepEqual(jobs.sort(), ['large', 'small']);
    for await (const area of (await bucketStore('site-b')).listStaging())
      assert.fail(`left a staging area: ${area.state}`);
  });

  test('a Station on the bucket serves the moved snapshots', async () => {
    const onBucket = await startServer('station', {
      dataDir: station.dataDir,
      env: (await ceph()).env('moved', 'site-a'),
    });
    try {
      const health = (await fetch(`${onBucket.url}/health`).then((r) => r.json())) as {
        storage: { kind: string; bucket: string };
      };
      assert.equal(health.storage.kind, 's3');
      assert.equal(health.storage.bucket, 'moved');
      const large = archives[2];
      assert.ok(large);
      const path = instancePaths('host-a', 'inst0000000000000001').archive(
        'large',
        stored.get('large') ?? '',
      );
      const res = await fetch(`${onBucket.url}${path}`, {
        headers: { authorization: `Bearer ${credential}` },
      });
      assert.equal(res.status, 200);
      assert.equal(sha256(Buffer.from(await res.arrayBuffer())), sha256(large.data));
    } finally {
      await onBucket.stop();
    }
  });
});
