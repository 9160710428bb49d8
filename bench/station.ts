/**
 * Station benchmark: one upload's ingest rate over loopback next to a plain `cp` of the same
 * file, 20 parallel uploads, and GET /api/overview latency with 10,000 indexed snapshots.
 * Run with `npm run bench`. Sizes: BENCH_MB (default 512) for the single upload.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient } from '../test/helpers/http.ts';
import { startServer, type TestServer } from '../test/helpers/server.ts';
import { archiveMeta, call, finalize, initiate } from '../test/helpers/uploads.ts';

const MIB = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'backupd-bench-'));

function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.replace(/\D+/g, '') ?? 0) / 1024);
}

function makeFile(path: string, bytes: number): string {
  const hash = createHash('sha256');
  const block = 8 * MIB;
  writeFileSync(path, '');
  for (let done = 0; done < bytes; done += block) {
    const chunk = randomBytes(Math.min(block, bytes - done));
    hash.update(chunk);
    writeFileSync(path, chunk, { flag: 'a' });
  }
  return hash.digest('hex');
}

/** Uploads a file from disk in recommended-size chunks, reading one chunk at a time. */
async function uploadFile(url: string, token: string, path: string, sha: string, instance: string) {
  const size = statSync(path).size;
  const meta = archiveMeta(Buffer.alloc(0), {
    scout_instance_id: instance,
    archive_size_bytes: size,
    archive_sha256: sha,
  });
  const started = await initiate(url, token, meta);
  if (started.status !== 200) throw new Error(`initiate: ${JSON.stringify(started.body)}`);
  const chunkSize: number = started.body.recommended_chunk_size_bytes;
  const file = await open(path, 'r');
  try {
    let offset = 0;
    const buffer = Buffer.alloc(chunkSize);
    while (offset < size) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(chunkSize, size - offset), offset);
      const reply = await call(
        url,
        'PUT',
        `/backup/uploads/${started.body.upload_id}/chunk?offset=${offset}`,
        token,
        buffer.subarray(0, bytesRead),
      );
      if (reply.status !== 200) throw new Error(`chunk: ${JSON.stringify(reply.body)}`);
      offset = reply.body.next_offset;
    }
  } finally {
    await file.close();
  }
  const done = await finalize(url, token, started.body.upload_id);
  if (done.status !== 200) throw new Error(`finalize: ${JSON.stringify(done.body)}`);
}

async function mint(url: string, body: object): Promise<string> {
  const admin = await adminClient(url);
  return (await admin.post('/api/credentials/mint', body)).body.credential;
}

async function singleUpload(station: TestServer) {
  const mb = Number(process.env.BENCH_MB ?? 512);
  const path = join(work, 'single.bin');
  const sha = makeFile(path, mb * MIB);
  let t = performance.now();
  execFileSync('cp', [path, join(work, 'copy.bin')]);
  const cpSeconds = (performance.now() - t) / 1000;
  rmSync(join(work, 'copy.bin'));
  const token = await mint(station.url, {});
  t = performance.now();
  await uploadFile(station.url, token, path, sha, 'bench-single-0001');
  const seconds = (performance.now() - t) / 1000;
  rmSync(path);
  console.log(
    `single upload   ${mb} MiB: ${(mb / seconds).toFixed(0)} MiB/s (initiate+chunks+finalize incl. SHA-256), cp of the same file ${(mb / cpSeconds).toFixed(0)} MiB/s; Station peak RSS ${peakRssMb(station.pid)} MB`,
  );
}

async function parallelUploads(station: TestServer) {
  const count = 20;
  const mb = 32;
  const token = await mint(station.url, { shared: true, max_registrations: count });
  const files = Array.from({ length: count }, (_, i) => {
    const path = join(work, `p${i}.bin`);
    return { path, sha: makeFile(path, mb * MIB), instance: `bench-par-${String(i).padStart(4, '0')}` };
  });
  const t = performance.now();
  await Promise.all(files.map((f) => uploadFile(station.url, token, f.path, f.sha, f.instance)));
  const seconds = (performance.now() - t) / 1000;
  console.log(
    `parallel        ${count} × ${mb} MiB: ${((count * mb) / seconds).toFixed(0)} MiB/s aggregate in ${seconds.toFixed(1)} s; Station peak RSS ${peakRssMb(station.pid)} MB`,
  );
}

async function overviewLatency() {
  const dataDir = join(work, 'overview-station');
  const root = join(dataDir, 'snapshots');
  // 10,000 snapshots: 10 scouts × 2 instances × 10 jobs × 50 snapshots, indexed at start-up.
  for (let s = 0; s < 10; s += 1) {
    for (let i = 0; i < 2; i += 1) {
      for (let j = 0; j < 10; j += 1) {
        const dir = join(root, `scout-${s}`, `instance-${s}-${i}`, `job-${j}`);
        mkdirSync(dir, { recursive: true });
        for (let n = 0; n < 50; n += 1) {
          const ts = new Date(Date.UTC(2026, 0, 1, 0, n))
            .toISOString()
            .replace('.000Z', 'Z')
            .replaceAll(':', '-');
          writeFileSync(join(dir, `job-${j}__${ts}__0123abcd.tar.zst`), `snapshot ${s}/${i}/${j}/${n}`);
        }
      }
    }
  }
  let t = performance.now();
  const station = await startServer('station', { entry: 'dist', dataDir });
  const startSeconds = (performance.now() - t) / 1000;
  try {
    const admin = await adminClient(station.url);
    const times: number[] = [];
    let count = 0;
    for (let k = 0; k < 20; k += 1) {
      t = performance.now();
      const reply = await admin.get('/api/overview');
      times.push(performance.now() - t);
      count = reply.body.storage.snapshot_count;
    }
    times.sort((a, b) => a - b);
    console.log(
      `overview        ${count} snapshots: median ${times[10]?.toFixed(0)} ms, p95 ${times[18]?.toFixed(0)} ms (first start with indexing ${startSeconds.toFixed(1)} s)`,
    );
  } finally {
    await station.dispose();
  }
}

try {
  const station = await startServer('station', { entry: 'dist', env: { LOG_LEVEL: 'warn' } });
  try {
    await singleUpload(station);
    await parallelUploads(station);
  } finally {
    await station.dispose();
  }
  await overviewLatency();
} finally {
  rmSync(work, { recursive: true, force: true });
}
