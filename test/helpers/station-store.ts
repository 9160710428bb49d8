// What a test Station holds, asked of its store rather than of files: the same store the Station
// built from its configuration (the disk under its data dir, or its prefix of the bucket when
// TEST_STORAGE_URL is set, see server.ts), so one assertion holds on both. Tests that are about
// the disk itself (a full tmpfs, a legacy folder, files dropped into BACKUP_ROOT) ask `diskOnly`
// whether they run.
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseS3Config } from '../../src/core/s3-config.ts';
import { storeWhole } from '../../src/station/storage/copy-snapshot.ts';
import { createDiskStore } from '../../src/station/storage/disk-store.ts';
import { createS3Store } from '../../src/station/storage/s3-store.ts';
import type { SnapshotKey, SnapshotStore } from '../../src/station/storage/storage.ts';
import { sha256 } from './hashes.ts';
import { testStorageUrl } from './server.ts';

/** Where a test Station keeps its snapshots: a data dir is enough to find them. */
export interface StationLike {
  dataDir: string;
}

export interface JobAt {
  scout: string;
  instance: string;
  job: string;
}

/** True when test Stations store snapshots in a bucket (TEST_STORAGE_URL is set). */
export const onS3 = () => Boolean(process.env.TEST_STORAGE_URL);

/**
 * The `skip` option of a test that is about the disk store itself: false on disk, a reason
 * naming "disk store only" when the Stations run on S3 (so the report shows it was left out).
 */
export function diskOnly(why: string): false | string {
  return onS3() ? `disk store only: ${why}` : false;
}

const stores = new Map<string, SnapshotStore>();

/** The store of the Station on `server.dataDir`, built as the Station builds its own. */
export function storeOf(server: StationLike): SnapshotStore {
  let store = stores.get(server.dataDir);
  if (!store) {
    const url = testStorageUrl(server.dataDir);
    if (url) {
      const config = parseS3Config({ ...process.env, STORAGE_URL: url }, (m) => new Error(m));
      if (!config) throw new Error(`no S3 configuration for ${url}`);
      store = createS3Store(config);
    } else {
      store = createDiskStore({
        backupRoot: join(server.dataDir, 'snapshots'),
        stagingDir: join(server.dataDir, 'staging'),
      });
    }
    stores.set(server.dataDir, store);
  }
  return store;
}

const keyOf = (at: JobAt, filename: string): SnapshotKey => ({
  scoutId: at.scout,
  instanceId: at.instance,
  jobName: at.job,
  filename,
});

export function snapshotExists(server: StationLike, at: JobAt, filename: string): Promise<boolean> {
  return storeOf(server).exists(keyOf(at, filename));
}

/** The stored bytes of a snapshot (small test snapshots only: the whole object in memory). */
export async function storedBytes(server: StationLike, at: JobAt, filename: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await storeOf(server).read(keyOf(at, filename))) as Readable) {
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** Names of the snapshots stored for one job, sorted (what a `readdir` of its folder was). */
export async function storedNames(server: StationLike, at: JobAt): Promise<string[]> {
  const names: string[] = [];
  for await (const file of storeOf(server).list()) {
    if (file.scoutId === at.scout && file.instanceId === at.instance && file.jobName === at.job) {
      names.push(file.filename);
    }
  }
  return names.sort();
}

/** Every stored snapshot of one Scout as `<instance>/<job>/<file>`, sorted. */
export async function storedUnder(server: StationLike, scout: string): Promise<string[]> {
  const paths: string[] = [];
  for await (const file of storeOf(server).list()) {
    if (file.scoutId === scout) paths.push(`${file.instanceId ?? ''}/${file.jobName}/${file.filename}`);
  }
  return paths.sort();
}

/**
 * The staging areas the store holds, one id each, sorted: a staged file's upload id on disk, a
 * multipart upload's id in the bucket (ids tell areas apart; they are not the same ids).
 */
export async function stagingAreas(server: StationLike): Promise<string[]> {
  const ids: string[] = [];
  for await (const area of storeOf(server).listStaging()) {
    const multipartId = area.state
      ? (JSON.parse(area.state) as { multipartId?: string }).multipartId
      : undefined;
    ids.push(area.uploadId ?? multipartId ?? '?');
  }
  return ids.sort();
}

/** Writes a whole snapshot into the Station's store behind its back (as move-storage writes one). */
export async function putSnapshot(
  server: StationLike,
  at: JobAt,
  filename: string,
  data: Buffer,
): Promise<void> {
  const expected = { sizeBytes: data.length, sha256: sha256(data) };
  const problem = await storeWhole(storeOf(server), keyOf(at, filename), Readable.from([data]), expected);
  if (problem !== null) throw new Error(problem);
}

export function removeSnapshot(server: StationLike, at: JobAt, filename: string): Promise<boolean> {
  return storeOf(server).remove(keyOf(at, filename));
}

/**
 * What the overview's and /health's `storage` says of where the Station keeps snapshots: its
 * BACKUP_ROOT on disk (with the disk's sizes), or the bucket (sizes unknown: null).
 */
export function assertStorageShown(
  server: StationLike,
  storage: Record<string, unknown>,
  assertion: { equal(actual: unknown, expected: unknown, message?: string): void },
): void {
  const url = testStorageUrl(server.dataDir);
  if (url) {
    assertion.equal(storage.kind, 's3');
    assertion.equal(storage.bucket, /^s3:\/\/([^/]+)/.exec(url)?.[1]);
    assertion.equal(storage.free_bytes, null, 'a bucket has no free space to report');
    assertion.equal(storage.total_bytes, null, 'a bucket has no size to report');
  } else {
    assertion.equal(storage.kind, 'disk');
    assertion.equal(storage.backup_root, join(server.dataDir, 'snapshots'));
  }
}
