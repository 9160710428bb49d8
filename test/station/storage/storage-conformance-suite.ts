// One suite for every SnapshotStore (restic's backend-test shape): the disk store and the S3
// store on a real Ceph RADOS Gateway run the same assertions through thin test files.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { before, describe, test } from 'node:test';
import { PARTS_PER_CHUNK } from '../../../src/station/storage/s3-multipart.ts';
import type { SnapshotKey, SnapshotStore, StagedUpload } from '../../../src/station/storage/storage.ts';
import { SnapshotExists } from '../../../src/station/storage/store-errors.ts';
import { sha256 } from '../../helpers/hashes.ts';

export interface StoreHarness {
  /** A new handle on the same store: a restarted Station, or another Station on the same bytes. */
  open(): SnapshotStore;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A body that sends `data` in pieces of at most 1 MiB (as a socket would), then fails when told. */
function body(data: Buffer, failAfter = false): Readable {
  async function* pieces() {
    for (let at = 0; at < data.length; at += 1024 * 1024) yield data.subarray(at, at + 1024 * 1024);
    if (failAfter) throw new Error('client went away');
  }
  return Readable.from(pieces(), { objectMode: false });
}

let scouts = 0;
/** The store's unit of staging: an S3 part (a recommended chunk holds PARTS_PER_CHUNK), 16 MiB on disk. */
function partOf(store: SnapshotStore, archiveSizeBytes: number): number {
  return store.partSizeFor(archiveSizeBytes);
}

function nextScout(): number {
  scouts += 1;
  return scouts;
}

function targetIn(scoutId: string, filename = 'job__2026-11-25T08-00-00Z__0123abcd.tar.zst'): SnapshotKey {
  return { scoutId, instanceId: 'inst-1', jobName: 'job', filename };
}

export function storageConformanceSuite(label: string, harness: () => Promise<StoreHarness>): void {
  describe(label, () => {
    let h: StoreHarness;
    let store: SnapshotStore;
    /** Each test works in its own scout folder of the one store. */
    const freshTarget = (filename?: string) => targetIn(`scout-${process.pid}-${nextScout()}`, filename);

    before(async () => {
      h = await harness();
      store = h.open();
      await store.prepare();
      await store.prepare(); // twice: start-up of a second Station
    });

    async function begin(target: SnapshotKey, sizeBytes: number, s = store): Promise<StagedUpload> {
      const upload = { uploadId: `up${randomBytes(6).toString('hex')}`, target, sizeBytes };
      return { ...upload, state: await s.beginStaging(upload) };
    }

    /** Appends `data` (the bytes from `offset`) and returns the upload with its new state. */
    async function append(upload: StagedUpload, offset: number, data: Buffer, s = store) {
      const result = await s.append(upload, offset, body(data));
      return { upload: { ...upload, state: result.state }, result };
    }

    async function storeWhole(target: SnapshotKey, data: Buffer) {
      let upload = await begin(target, data.length);
      ({ upload } = await append(upload, 0, data));
      assert.equal(await store.stagedSha256(upload), sha256(data));
      return store.complete(upload);
    }

    test('health and the chunk size', async () => {
      const health = await store.health();
      assert.equal(health.kind, store.kind);
      assert.equal(health.writable, true);
      const tib = 1024 ** 4;
      const chunk = store.chunkSizeFor(tib);
      assert.ok(chunk >= 5 * 1024 * 1024, 'at least S3’s 5 MiB part minimum');
      if (store.kind === 'disk') {
        // Fewer, larger chunks: each costs the Station milliseconds of CPU (disk-store.ts).
        assert.equal(store.chunkSizeFor(1), 64 * 1024 * 1024, 'a disk Station asks for 64 MiB chunks');
        assert.equal(store.partSizeFor(1), 16 * 1024 * 1024, 'a replica copies in 16 MiB pieces');
      }
      if (store.kind === 's3') {
        assert.equal(chunk, PARTS_PER_CHUNK * store.partSizeFor(tib), 'a chunk is whole parts');
        assert.ok(Math.ceil(tib / chunk) <= 10_000, '1 TiB fits in 10,000 parts');
        assert.equal(chunk % (1024 * 1024), 0, 'whole MiB');
        assert.throws(
          () => store.chunkSizeFor(10_000 * 5 * 1024 ** 3 + 1),
          (e: { status?: number }) => e.status === 413,
        );
      }
    });

    test('staging: appends at offsets, resumed by another handle, hashed across the restart, completed', async () => {
      const target = freshTarget();
      const part = partOf(store, 40 * 1024 * 1024);
      const data = randomBytes(2 * part + 12_345);
      let upload = await begin(target, data.length);
      assert.equal(await store.stagedBytes(upload), 0);

      let step = await append(upload, 0, data.subarray(0, part));
      assert.equal(step.result.stagedBytes, part);
      assert.equal(step.result.keptBytes, part);
      upload = step.upload;

      // A restarted Station (a new store object) continues the upload and its hash.
      const other = h.open();
      assert.equal(await other.stagedBytes(upload), part);
      step = await append(upload, part, data.subarray(part), other);
      assert.equal(step.result.stagedBytes, data.length);
      upload = step.upload;

      assert.equal(await h.open().stagedSha256(upload), sha256(data));
      assert.equal(await store.stat(target), null, 'nothing under the final name before complete');
      const listed = [];
      for await (const file of store.list()) if (file.scoutId === target.scoutId) listed.push(file);
      assert.deepEqual(listed, [], 'a staged upload is not listed as a snapshot');

      const stored = await store.complete(upload);
      assert.equal(stored.filename, target.filename);
      assert.equal(stored.sizeBytes, data.length);
      assert.equal(sha256(await readAll(await store.read(target))), sha256(data));
      assert.equal((await store.stat(target))?.sizeBytes, data.length);
    });

    test('an interrupted append keeps what was durable; the upload continues from there', async () => {
      const target = freshTarget();
      const part = partOf(store, 40 * 1024 * 1024);
      const data = randomBytes(2 * part + 999);
      let upload = await begin(target, data.length);
      const sent = part + part / 2;
      const outcome = await store
        .append(upload, 0, body(data.subarray(0, sent), true))
        .catch((error) => error);
      if (!(outcome instanceof Error)) upload = { ...upload, state: outcome.state };
      const kept = await h.open().stagedBytes(upload);
      assert.ok(kept <= sent, `kept ${kept} of ${sent}`);
      assert.ok(kept >= part, `kept ${kept}: at least the whole first part`);

      ({ upload } = await append(upload, kept, data.subarray(kept)));
      assert.equal(await store.stagedSha256(upload), sha256(data));
      const stored = await store.complete(upload);
      assert.equal(sha256(await readAll(await store.read(stored))), sha256(data));
    });

    test('one chunk of several parts (each part finishing while the next arrives) is kept whole', async () => {
      const target = freshTarget();
      const part = partOf(store, 40 * 1024 * 1024);
      const data = randomBytes(3 * part + 777);
      let upload = await begin(target, data.length);
      const first = await append(upload, 0, data.subarray(0, 2 * part + 5));
      assert.equal(first.result.stagedBytes, 2 * part + 5);
      upload = first.upload;
      // Another Station continues from the parts and the tail the first one kept.
      const rest = await append(upload, 2 * part + 5, data.subarray(2 * part + 5), h.open());
      assert.equal(rest.result.stagedBytes, data.length);
      assert.equal(await h.open().stagedSha256(rest.upload), sha256(data));
      const stored = await store.complete(rest.upload);
      assert.equal(sha256(await readAll(await store.read(stored))), sha256(data));
    });

    test('chunks of any size, not aligned to parts, each kept as sent, alternating between handles', async () => {
      const target = freshTarget();
      const part = partOf(store, 20 * 1024 * 1024);
      const data = randomBytes(part + 12_345);
      let upload = await begin(target, data.length);
      const chunk = 5 * 1024 * 1024 + 7;
      for (let offset = 0, turn = 0; offset < data.length; turn += 1) {
        const handle = turn % 2 === 0 ? store : h.open();
        const step = await append(upload, offset, data.subarray(offset, offset + chunk), handle);
        offset = Math.min(data.length, offset + chunk);
        assert.equal(step.result.stagedBytes, offset, `after chunk ${turn}`);
        assert.equal(await h.open().stagedBytes(step.upload), offset);
        upload = step.upload;
      }
      assert.equal(await h.open().stagedSha256(upload), sha256(data));
      const stored = await store.complete(upload);
      assert.equal(sha256(await readAll(await store.read(stored))), sha256(data));
    });

    test('a body that runs past the archive size is refused and nothing of it is kept', async () => {
      const target = freshTarget();
      const data = randomBytes(1000);
      const upload = await begin(target, data.length);
      await assert.rejects(
        store.append(upload, 0, body(randomBytes(1500))),
        (e: { status?: number }) => e.status === 400,
      );
      assert.equal(await store.stagedBytes(upload), 0);
      const step = await append(upload, 0, data);
      assert.equal(step.result.stagedBytes, 1000);
      assert.equal(await store.stagedSha256(step.upload), sha256(data));
    });

    test('reset throws the staged bytes away; abort removes the staging area', async () => {
      const target = freshTarget();
      const data = randomBytes(3000);
      let upload = await begin(target, data.length);
      ({ upload } = await append(upload, 0, randomBytes(3000)));
      upload = await store.resetStaging(upload);
      assert.equal(await store.stagedBytes(upload), 0);
      ({ upload } = await append(upload, 0, data));
      assert.equal(await store.stagedSha256(upload), sha256(data));

      const isOurs = (area: { uploadId: string | null; target: SnapshotKey | null }) =>
        area.uploadId === upload.uploadId || area.target?.scoutId === target.scoutId;
      const staged = async () => {
        const areas = [];
        for await (const area of h.open().listStaging()) if (isOurs(area)) areas.push(area);
        return areas;
      };
      const listed = await staged();
      assert.equal(listed.length, 1, 'one staging area for the upload');
      assert.ok((listed[0]?.startedMs ?? Date.now()) <= Date.now() + 60_000);
      // What listStaging gives is enough to abort (the sweep has no session for an orphan).
      await store.abortStaging(listed[0] ?? upload);
      assert.deepEqual(await staged(), []);
      await store.abortStaging(upload); // missing is fine
      assert.equal(await store.stat(target), null);
    });

    test('a store never chooses a name: complete onto a taken one is SnapshotExists, nothing is overwritten', async () => {
      const target = freshTarget();
      const first = randomBytes(2048);
      const stored = await storeWhole(target, first);
      assert.equal(stored.filename, target.filename);

      // A second upload staged under the same name (two initiations that raced, or a file put
      // there meanwhile): both stores refuse alike, and the staging area stays for the caller.
      const second = randomBytes(4096);
      let upload = await begin(target, second.length);
      ({ upload } = await append(upload, 0, second));
      await assert.rejects(store.complete(upload), (error: unknown) => {
        assert.ok(error instanceof SnapshotExists, `SnapshotExists, not ${String(error)}`);
        assert.deepEqual(error.key, target);
        return true;
      });
      assert.equal(sha256(await readAll(await store.read(target))), sha256(first), 'the first is untouched');
      assert.equal(await store.stagedSha256(upload), sha256(second), 'the staged bytes are still there');
      await store.abortStaging(upload);

      // The name a caller gives is the one stored, also a -N name (no -2 → -3 by the store).
      const numbered = { ...target, filename: target.filename.replace(/\.tar\.zst$/, '-2.tar.zst') };
      assert.equal((await storeWhole(numbered, second)).filename, numbered.filename);
      const names = [];
      for await (const file of store.list()) if (file.scoutId === target.scoutId) names.push(file.filename);
      assert.deepEqual(names.sort(), [target.filename, numbered.filename].sort());
    });

    test('range reads, stat, exists, list, remove', async () => {
      const target = freshTarget();
      const data = randomBytes(100_000);
      await storeWhole(target, data);
      assert.deepEqual(
        await readAll(await store.read(target, { start: 10, end: 19 })),
        data.subarray(10, 20),
      );
      assert.deepEqual(
        await readAll(await store.read(target, { start: 99_990, end: 99_999 })),
        data.subarray(99_990),
      );
      assert.equal(await store.exists(target), true);
      const stat = await store.stat(target);
      assert.equal(stat?.sizeBytes, data.length);
      assert.ok(Math.abs((stat?.mtimeMs ?? 0) - Date.now()) < 10 * 60_000, 'mtime is about now');

      const listed = [];
      for await (const file of store.list()) if (file.scoutId === target.scoutId) listed.push(file);
      assert.deepEqual(
        listed.map(({ scoutId, instanceId, jobName, filename, sizeBytes }) => ({
          scoutId,
          instanceId,
          jobName,
          filename,
          sizeBytes,
        })),
        [{ ...target, sizeBytes: data.length }],
      );

      const missing = { ...target, filename: 'job__2026-11-25T09-00-00Z__ffffffff.tar.zst' };
      assert.equal(await store.stat(missing), null);
      assert.equal(await store.exists(missing), false);
      await assert.rejects(async () => readAll(await store.read(missing)));

      assert.equal(await store.remove(target), true);
      assert.equal(await store.remove(target), false);
      assert.equal(await store.exists(target), false);
    });

    test('removeInstance removes that instance only', async () => {
      const target = freshTarget();
      const otherInstance = { ...target, instanceId: 'inst-2' };
      for (const [i, key] of [target, { ...target, jobName: 'other' }, otherInstance].entries()) {
        await storeWhole(key, randomBytes(100 + i));
      }
      await store.removeInstance(target.scoutId, 'inst-1');
      const left = [];
      for await (const file of store.list()) if (file.scoutId === target.scoutId) left.push(file.instanceId);
      assert.deepEqual(left, ['inst-2']);
    });

    test('keys are built from valid components only', async () => {
      const bad = { ...freshTarget(), jobName: '../escape' };
      await assert.rejects(
        async () => store.stat(bad),
        (e: { status?: number }) => e.status === 400,
      );
      const badName = { ...freshTarget(), filename: 'x/../../y.tar.zst' };
      await assert.rejects(
        async () => begin(badName, 1),
        (e: { status?: number }) => e.status === 400,
      );
    });
  });
}
