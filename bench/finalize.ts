/**
 * Finalize time of one large upload (issue #14: the Station hashes while it receives, so
 * finalize no longer reads the staged file again). Uploads BENCH_GIB GiB (default 1) from a
 * file in 16 MiB chunks to a Station started from the source, then times POST …/finalize.
 * Run: `node bench/finalize.ts` (from any checkout, to compare before and after).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient } from '../test/helpers/http.ts';
import { startServer } from '../test/helpers/server.ts';
import { archiveMeta, call, finalize, initiate } from '../test/helpers/uploads.ts';
import { cpuSeconds } from './proc-stats.ts';

const MIB = 1024 * 1024;
const bytes = Number(process.env.BENCH_GIB ?? 1) * 1024 * MIB;
const work = mkdtempSync(join(tmpdir(), 'backupd-bench-finalize-'));
const path = join(work, 'archive.bin');

const hash = createHash('sha256');
writeFileSync(path, '');
for (let done = 0; done < bytes; done += 8 * MIB) {
  const block = randomBytes(Math.min(8 * MIB, bytes - done));
  hash.update(block);
  writeFileSync(path, block, { flag: 'a' });
}
const sha = hash.digest('hex');

const station = await startServer('station', { env: { LOG_LEVEL: 'warn' } });
try {
  const admin = await adminClient(station.url);
  const token: string = (await admin.post('/api/credentials/mint', {})).body.credential;
  const meta = archiveMeta(Buffer.alloc(0), { archive_size_bytes: bytes, archive_sha256: sha });
  const started = await initiate(station.url, token, meta);
  const id: string = started.body.upload_id;
  const file = await open(path, 'r');
  const buffer = Buffer.alloc(16 * MIB);
  const cpu0 = cpuSeconds(station.pid);
  const t0 = performance.now();
  for (let offset = 0; offset < bytes; ) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, bytes - offset), offset);
    const reply = await call(
      station.url,
      'PUT',
      `/backup/uploads/${id}/chunk?offset=${offset}`,
      token,
      buffer.subarray(0, bytesRead),
    );
    if (reply.status !== 200) throw new Error(`chunk: ${JSON.stringify(reply.body)}`);
    offset = reply.body.next_offset;
  }
  await file.close();
  const t1 = performance.now();
  const cpu1 = cpuSeconds(station.pid);
  const done = await finalize(station.url, token, id);
  const t2 = performance.now();
  const cpu2 = cpuSeconds(station.pid);
  if (done.body.status !== 'stored') throw new Error(`finalize: ${JSON.stringify(done.body)}`);
  const mibps = bytes / MIB / ((t1 - t0) / 1000);
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  console.log(
    `upload ${(bytes / MIB).toFixed(0)} MiB: ${seconds(t1 - t0)} s (${mibps.toFixed(0)} MiB/s), Station CPU ${(cpu1 - cpu0).toFixed(2)} s`,
  );
  console.log(`finalize: ${seconds(t2 - t1)} s, Station CPU ${(cpu2 - cpu1).toFixed(2)} s`);
  console.log(
    `Station CPU per received GiB (upload + finalize): ${((cpu2 - cpu0) / (bytes / 1024 / MIB)).toFixed(2)} s`,
  );
} finally {
  await station.dispose();
  rmSync(work, { recursive: true, force: true });
}
