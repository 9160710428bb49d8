// With STORAGE_URL set, no snapshot byte touches the Station's disk: an upload in chunks that do
// not line up with the parts (so tail objects are used), a resume, a download and a Range read go
// through a real Ceph RADOS Gateway, and afterwards neither the data dir (its database aside)
// nor the Station's TMPDIR holds any of the archive's bytes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { instancePaths } from '../../../src/shared/protocol/paths.ts';
import { onCeph } from '../../helpers/ceph.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { adminClient } from '../../helpers/http.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { startServer } from '../../helpers/server.ts';
import { archiveMeta, finalize, initiate, putChunk } from '../../helpers/uploads.ts';

function filesUnder(dir: string, skip: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (path === skip) continue;
    if (entry.isDirectory()) found.push(...filesUnder(path, skip));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

onCeph('S3: no snapshot byte on the Station disk', (ceph) => {
  const temp = mkdtempSync(join(tmpdir(), 'backupd-s3-tmp-'));
  after(() => rmSync(temp, { recursive: true, force: true }));

  test('upload, resume, download and Range read leave nothing of the archive on disk', async () => {
    const station = await startServer('station', { env: { ...(await ceph()).env('nodisk'), TMPDIR: temp } });
    try {
      const token = await mintStationToken(await adminClient(station.url));
      const data = randomBytes(20 * 1024 * 1024 + 333);
      const meta = archiveMeta(data, { job_name: 'nodisk' });
      const started = await initiate(station.url, token, meta);
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const id = started.body.upload_id as string;
      assert.ok(started.body.recommended_chunk_size_bytes >= 16 * 1024 * 1024);

      const chunk = 7 * 1024 * 1024; // parts are 16 MiB: chunks end inside parts
      let offset = 0;
      while (offset < data.length) {
        const reply = await putChunk(station.url, token, id, offset, data.subarray(offset, offset + chunk));
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        assert.equal(reply.body.next_offset, Math.min(data.length, offset + chunk));
        offset = reply.body.next_offset;
        if (offset === chunk) {
          // A wrong offset is refused with where to resume; a repeated initiate answers it too.
          const wrong = await putChunk(station.url, token, id, 0, data.subarray(0, 10));
          assert.equal(wrong.status, 409);
          assert.equal(wrong.body.detail.next_offset, chunk);
          const again = await initiate(station.url, token, meta);
          assert.equal(again.body.next_offset, chunk);
        }
      }
      const done = await finalize(station.url, token, id);
      assert.equal(done.status, 200, JSON.stringify(done.body));

      const path = instancePaths(meta.scout_id, meta.scout_instance_id).archive(
        'nodisk',
        done.body.stored_as,
      );
      const whole = await fetch(`${station.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(whole.status, 200);
      assert.equal(sha256(Buffer.from(await whole.arrayBuffer())), sha256(data));
      const part = await fetch(`${station.url}${path}`, {
        headers: { authorization: `Bearer ${token}`, range: 'bytes=16777210-16777229' },
      });
      assert.equal(part.status, 206);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), data.subarray(16777210, 16777230));

      const health = (await fetch(`${station.url}/health`).then((r) => r.json())) as {
        storage: { kind: string };
      };
      assert.equal(health.storage.kind, 's3');

      // Nothing of the archive outside the database: not one 64-byte sample of it in any file.
      const files = [
        ...filesUnder(station.dataDir, join(station.dataDir, 'pgdata')),
        ...filesUnder(temp, ''),
      ];
      const samples = [0, 5_000_000, 16 * 1024 * 1024 - 32, data.length - 64].map((at) =>
        data.subarray(at, at + 64),
      );
      for (const file of files) {
        assert.ok(statSync(file).size < 1024 * 1024, `${file} is ${statSync(file).size} bytes`);
        const content = readFileSync(file);
        for (const sample of samples)
          assert.equal(content.indexOf(sample), -1, `${file} holds archive bytes`);
      }
    } finally {
      await station.dispose();
    }
  });
});
