/**
 * S3 benchmark (issue #15): one upload of BENCH_GIB GiB (default 1) and its download through a
 * Station whose snapshots live in a bucket (a local Ceph RADOS Gateway), next to the same
 * object written and read directly with the same S3 client (the Station's part size, one part
 * at a time as the Station sends them; and one streamed PutObject): MiB/s and the ratios
 * (target ≥ 0.7×). Best of BENCH_RUNS runs (default 2): the machine is shared.
 * Run with `node bench/s3.ts` (BENCH_ENTRY=source runs the Station from src/ without a build).
 */
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { parseS3Config } from '../src/core/s3-config.ts';
import { instancePaths } from '../src/shared/protocol/paths.ts';
import { partSizeFor } from '../src/station/storage/s3-multipart.ts';
import { s3Client } from '../src/station/storage/s3-store.ts';
import { startCeph } from '../test/helpers/ceph.ts';
import { adminClient } from '../test/helpers/http.ts';
import { startServer } from '../test/helpers/server.ts';
import { makeRandomFile, uploadFile } from './bench-kit.ts';
import { cpuSeconds, mib, peakRssMib } from './proc-stats.ts';

const GIB = 1024 ** 3;
const gib = Number(process.env.BENCH_GIB ?? 1);
const runs = Number(process.env.BENCH_RUNS ?? 2);
const entry = process.env.BENCH_ENTRY === 'source' ? 'source' : 'dist';
const bytes = Math.round(gib * GIB);
const work = mkdtempSync(join(tmpdir(), 'backupd-bench-s3-'));
const f0 = (n: number) => n.toFixed(0);
const f2 = (n: number) => n.toFixed(2);
const row = (what: string, value: string, note = '') =>
  console.log(`${what}: ${value}${note ? `  (${note})` : ''}`);

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function best(fn: () => Promise<number>): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i += 1) fastest = Math.min(fastest, await fn());
  return fastest;
}

/** Multipart upload of the file in parts of `partSize`, one after the other (as the Station does). */
async function putParts(client: S3Client, Bucket: string, Key: string, path: string, partSize: number) {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  const file = await open(path, 'r');
  const buffer = Buffer.allocUnsafe(partSize);
  const parts: { ETag: string; PartNumber: number }[] = [];
  try {
    for (let offset = 0; offset < bytes; offset += partSize) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(partSize, bytes - offset), offset);
      const PartNumber = parts.length + 1;
      const body = buffer.subarray(0, bytesRead);
      const answer = await client.send(
        new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body }),
      );
      parts.push({ ETag: answer.ETag ?? '', PartNumber });
    }
  } finally {
    await file.close();
  }
  await client.send(
    new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }),
  );
}

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const chunk of stream) count += (chunk as Uint8Array).length;
  if (count !== bytes) throw new Error(`read ${count} of ${bytes} bytes`);
  return count;
}

const ceph = await startCeph({ backend: 'bluestore' });
try {
  const env = ceph.env('bench');
  const config = parseS3Config(env, (m) => new Error(m));
  if (!config) throw new Error('no S3 configuration');
  const client = s3Client(config);
  const path = join(work, 'bench.bin');
  const sha = makeRandomFile(path, bytes);
  const Bucket = config.bucket;

  const station = await startServer('station', { entry, env: { ...env, LOG_LEVEL: 'warn' } });
  try {
    const partSize = partSizeFor(bytes);
    const direct = {
      parts: await best(() => seconds(() => putParts(client, Bucket, 'direct/parts.bin', path, partSize))),
      put: await best(() =>
        seconds(() =>
          client.send(
            new PutObjectCommand({
              Bucket,
              Key: 'direct/put.bin',
              Body: createReadStream(path),
              ContentLength: bytes,
            }),
          ),
        ),
      ),
      get: await best(() =>
        seconds(async () =>
          drain(
            (await client.send(new GetObjectCommand({ Bucket, Key: 'direct/parts.bin' })))
              .Body as AsyncIterable<unknown>,
          ),
        ),
      ),
    };
    for (const Key of ['direct/parts.bin', 'direct/put.bin'])
      await client.send(new DeleteObjectCommand({ Bucket, Key }));

    const admin = await adminClient(station.url);
    const mint = async () => (await admin.post('/api/credentials/mint', {})).body.credential as string;
    const cpuBefore = cpuSeconds(station.pid);
    let stored = { scoutId: '', filename: '' };
    let instance = '';
    let token = '';
    let round = 0;
    const viaStation = await best(async () => {
      round += 1;
      instance = `bench-s3-${String(round).padStart(8, '0')}`;
      token = await mint(); // a Station token binds to one Scout instance
      return seconds(async () => {
        stored = await uploadFile(station.url, token, path, sha, instance);
      });
    });
    const uploadCpu = (cpuSeconds(station.pid) - cpuBefore) / (runs * gib);
    const latest = `${station.url}${instancePaths(stored.scoutId, instance).latest('documents')}`;
    const download = await best(() =>
      seconds(async () => {
        const res = await fetch(latest, { headers: { authorization: `Bearer ${token}` } });
        if (res.status !== 200 || !res.body) throw new Error(`download answered ${res.status}`);
        await drain(res.body);
      }),
    );

    const size = mib(bytes);
    const bestPut = Math.min(direct.parts, direct.put);
    row(
      `Direct multipart put, ${gib} GiB in ${f0(mib(partSize))} MiB parts`,
      `${f0(size / direct.parts)} MiB/s`,
    );
    row(`Direct streamed PutObject, ${gib} GiB`, `${f0(size / direct.put)} MiB/s`);
    row(`Direct GetObject, ${gib} GiB`, `${f0(size / direct.get)} MiB/s`);
    row(
      `Upload ${gib} GiB through the Station on S3 (initiate + chunks + finalize)`,
      `${f0(size / viaStation)} MiB/s`,
      `${f2(direct.parts / viaStation)}× direct multipart (target ≥ 0.7×), ${f2(bestPut / viaStation)}× the faster direct put`,
    );
    row('Station CPU per received GiB, on S3', `${f2(uploadCpu)} s`, 'target ≤ 1.5 s (issue #27)');
    row(
      `Download ${gib} GiB through the Station on S3 (recovery route)`,
      `${f0(size / download)} MiB/s`,
      `${f2(direct.get / download)}× direct GetObject`,
    );
    row('Station peak RSS', `${f0(peakRssMib(station.pid))} MiB`, 'target ≤ 300');
  } finally {
    await station.dispose();
  }
} finally {
  await ceph.stop();
  rmSync(work, { recursive: true, force: true });
}
