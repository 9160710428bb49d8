/**
 * Scout benchmark: backs up a generated dataset (text, incompressible binary, thousands of
 * small files) through a real Station on loopback and prints source MiB/s and the Scout's
 * peak RSS next to `tar -cf - | zstd -3 -T0 | age -r` on the same data.
 * BENCH_GIB sets the dataset size (default 1).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { adminClient } from '../test/helpers/http.ts';
import { startServer } from '../test/helpers/server.ts';

const MIB = 1024 * 1024;
const gib = Number(process.env.BENCH_GIB ?? 1);
const root = join(tmpdir(), `backupd-bench-${gib}g`);
const data = join(root, 'scan', 'dataset');

function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.replace(/\D+/g, '') ?? 0) / 1024);
}

const WORDS =
  'the quick brown fox jumps over a lazy dog backup station scout archive encrypted snapshot restore key folder file'.split(
    ' ',
  );

/** ~45% text, ~45% random binary, ~10% small files: what a home folder looks like to a backup tool. */
function generate(): void {
  if (existsSync(join(data, '.complete'))) return;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(data, 'text'), { recursive: true });
  mkdirSync(join(data, 'binary'), { recursive: true });
  const total = gib * 1024 * MIB;
  const textBlock = Buffer.from(
    Array.from({ length: 200_000 }, (_, i) => WORDS[(i * 7 + (i >> 3)) % WORDS.length]).join(' '),
  );
  for (let done = 0, n = 0; done < total * 0.45; n += 1) {
    const parts = Array.from({ length: 32 }, (_, k) => textBlock.subarray((k * 977 * (n + 1)) % 100_000));
    const file = Buffer.concat([...parts, Buffer.from(`file ${n}\n`)]).subarray(0, 32 * MIB);
    writeFileSync(join(data, 'text', `doc-${n}.txt`), file);
    done += file.length;
  }
  for (let done = 0, n = 0; done < total * 0.45; n += 1) {
    writeFileSync(join(data, 'binary', `blob-${n}.bin`), randomBytes(64 * MIB));
    done += 64 * MIB;
  }
  const smallCount = Math.round(5000 * gib);
  for (let i = 0; i < smallCount; i += 1) {
    const dir = join(data, 'small', `d${i % 50}`, `e${i % 7}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.dat`), randomBytes(1024 + ((i * 7919) % 40_000)));
  }
  writeFileSync(join(data, '.complete'), '');
}

function sourceBytes(): number {
  return Number(execFileSync('du', ['-sb', '--exclude=.complete', data]).toString().split('\t')[0]);
}

function reference(recipient: string): number {
  const out = join(root, 'reference.tar.zst');
  const t = performance.now();
  execFileSync('sh', [
    '-c',
    'tar -cf - -C "$1" . | zstd -3 -T0 -q | age -r "$2" > "$3"',
    'sh',
    data,
    recipient,
    out,
  ]);
  const seconds = (performance.now() - t) / 1000;
  rmSync(out);
  return seconds;
}

/** `backupd scout restore` (download, decrypt, decompress, extract) next to age -d | zstd -d | tar -x. */
async function restoreBench(
  stationUrl: string,
  token: string,
  scoutData: string,
  admin: Awaited<ReturnType<typeof adminClient>>,
) {
  const status = (await admin.get('/api/status')).body;
  const key = (await admin.get('/api/encryption-key')).body;
  const snapshot = join(root, 'snapshot.tar.zst');
  const res = await fetch(
    `${stationUrl}/backup/recovery/${status.scout_id}/${status.scout_instance_id}/dataset/latest`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
  if (!res.body) throw new Error(`download failed: ${res.status}`);
  await pipeline(
    Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
    createWriteStream(snapshot),
  );
  writeFileSync(join(root, 'key.txt'), `${key.age_identity}\n`);
  const refDest = join(root, 'restore-ref');
  rmSync(refDest, { recursive: true, force: true });
  mkdirSync(refDest);
  let t = performance.now();
  execFileSync('sh', [
    '-c',
    'age -d -i "$1" "$2" | zstd -d -q | tar -x -C "$3"',
    'sh',
    join(root, 'key.txt'),
    snapshot,
    refDest,
  ]);
  const reference = (performance.now() - t) / 1000;
  rmSync(refDest, { recursive: true, force: true });
  const dest = join(root, 'restore-ours');
  rmSync(dest, { recursive: true, force: true });
  t = performance.now();
  execFileSync(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'dist', 'backupd.mjs'),
      'scout',
      'restore',
      '--data-dir',
      scoutData,
      '--job',
      'dataset',
      '--dest',
      dest,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  const seconds = (performance.now() - t) / 1000;
  rmSync(dest, { recursive: true, force: true });
  rmSync(snapshot);
  return { seconds, reference };
}

const rssMb = (pid: number) =>
  Math.round(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024);

/** A restore drill of the newest snapshot: wall time and the Scout's highest resident memory meanwhile. */
async function drillBench(admin: Awaited<ReturnType<typeof adminClient>>, pid: number) {
  const t = performance.now();
  const queued = await admin.post('/api/drills/run', {});
  if (queued.body.status !== 'queued') throw new Error(`drill not queued: ${JSON.stringify(queued.body)}`);
  let maxRss = 0;
  for (;;) {
    maxRss = Math.max(maxRss, rssMb(pid));
    if ((await admin.get('/api/status')).body.operation === null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t) / 1000;
  const drill = (await admin.get('/api/directories')).body.directories[0].state.last_drill;
  if (drill?.status !== 'ok') throw new Error(`drill failed: ${drill?.error}`);
  return { seconds, maxRss, rssBefore: rssMb(pid), bytes: drill.bytes as number };
}

async function ours() {
  const station = await startServer('station', { entry: 'dist', env: { LOG_LEVEL: 'warn' } });
  const scoutData = join(root, 'scout-data');
  rmSync(scoutData, { recursive: true, force: true });
  const scout = await startServer('scout', {
    entry: 'dist',
    dataDir: scoutData,
    env: { LOG_LEVEL: 'warn', SCAN_ROOT: join(root, 'scan') },
  });
  try {
    const stationAdmin = await adminClient(station.url);
    const credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const admin = await adminClient(scout.url);
    await admin.post('/api/settings', { station_url: station.url, scout_credential: credential });
    await admin.post('/api/directories/save-job', { relative_path: 'dataset', config: {} });
    const recipient = (await admin.get('/api/encryption-key')).body.age_recipient as string;
    const t = performance.now();
    await admin.post('/api/run-now');
    for (;;) {
      const status = await admin.get('/api/status');
      if (process.env.BENCH_TRACE)
        console.log(
          status.body.operation?.phase,
          readFileSync(`/proc/${scout.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1],
        );
      if (status.body.operation === null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t) / 1000;
    const job = (await admin.get('/api/directories')).body.directories[0];
    if (job.state.last_status !== 'uploaded') throw new Error(`backup failed: ${job.state.last_error}`);
    const rss = peakRssMb(scout.pid);
    const drill = await drillBench(admin, scout.pid);
    const restore = await restoreBench(station.url, credential, scoutData, admin);
    return { seconds, rss, stationRss: peakRssMb(station.pid), recipient, restore, drill };
  } finally {
    await scout.dispose();
    await station.dispose();
  }
}

generate();
const bytes = sourceBytes();
const mib = bytes / MIB;
const run = await ours();
const refSeconds = reference(run.recipient);
const rate = (s: number) => `${(mib / s).toFixed(0)} MiB/s`;
console.log(`dataset: ${(mib / 1024).toFixed(2)} GiB at ${data}`);
console.log('| pipeline | time | source throughput | peak RSS |');
console.log('| --- | --- | --- | --- |');
console.log(
  `| tar -cf - \\| zstd -3 -T0 \\| age -r (to a file) | ${refSeconds.toFixed(1)} s | ${rate(refSeconds)} | — |`,
);
console.log(
  `| backupd run-now: walk, tar, zstd, age, stage, upload to a loopback Station | ${run.seconds.toFixed(1)} s | ${rate(run.seconds)} (${(refSeconds / run.seconds).toFixed(2)}× the reference) | Scout ${run.rss} MiB, Station ${run.stationRss} MiB |`,
);
console.log(
  `| age -d \\| zstd -d \\| tar -x (local snapshot) | ${run.restore.reference.toFixed(1)} s | ${rate(run.restore.reference)} | — |`,
);
console.log(
  `| backupd scout restore (download from the Station, decrypt, decompress, extract) | ${run.restore.seconds.toFixed(1)} s | ${rate(run.restore.seconds)} (${(run.restore.reference / run.restore.seconds).toFixed(2)}× the reference) | — |`,
);
console.log(
  `| backupd restore drill (download, decrypt, decompress, read every entry, check the fingerprint; writes nothing) | ${run.drill.seconds.toFixed(1)} s | ${rate(run.drill.seconds)} | Scout ${run.drill.maxRss} MiB at most during the drill (${run.drill.rssBefore} MiB after) |`,
);
