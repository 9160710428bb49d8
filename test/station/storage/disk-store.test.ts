// The disk store's own promises beyond the storage conformance suite: the SHA-256 comes from
// the bytes as they were written (finalize reads nothing again), a restarted Station re-hashes
// what was staged, a taken name is refused (SnapshotExists; the store never picks another),
// staging on another filesystem (EXDEV) is copied into place, a full staging disk answers 507 and keeps what was written, and no
// key reaches outside BACKUP_ROOT.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import type { AppError } from '../../../src/core/errors.ts';
import { createDiskStore } from '../../../src/station/storage/disk-store.ts';
import type { StagedUpload } from '../../../src/station/storage/storage.ts';
import { SnapshotExists } from '../../../src/station/storage/store-errors.ts';
import { sha256 } from '../../helpers/hashes.ts';

const pieces = (data: Buffer, size = 64 * 1024) =>
  Readable.from(
    Array.from({ length: Math.ceil(data.length / size) }, (_, i) => data.subarray(i * size, (i + 1) * size)),
  );

const dirs: string[] = [];
function folders(stagingBase = tmpdir()) {
  const backupRoot = mkdtempSync(join(tmpdir(), 'backupd-disk-root-'));
  const stagingDir = mkdtempSync(join(stagingBase, 'backupd-disk-staging-'));
  dirs.push(backupRoot, stagingDir);
  return { backupRoot, stagingDir };
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function upload(sizeBytes: number, filename = 'job__2026-11-01T00-00-00Z__abcdef01.tar.zst'): StagedUpload {
  n += 1;
  return {
    uploadId: `upload-${n}`,
    target: { scoutId: 'host', instanceId: 'inst-1', jobName: 'job', filename },
    sizeBytes,
    state: null,
  };
}

describe('disk store', () => {
  test('the SHA-256 is the one of the bytes as written; a restarted store re-hashes the staged file', async () => {
    const where = folders();
    const store = createDiskStore(where);
    const data = randomBytes(5 * 1024 * 1024 + 17);
    const up = upload(data.length);
    await store.beginStaging(up);
    const first = await store.append(up, 0, pieces(data.subarray(0, 3_000_000)));
    assert.deepEqual(first, { stagedBytes: 3_000_000, keptBytes: 3_000_000, state: null });
    await store.append(up, 3_000_000, pieces(data.subarray(3_000_000)));
    assert.equal(await store.stagedSha256(up), sha256(data));

    // Change a staged byte behind the store's back: the running hash does not read the file…
    const staged = join(where.stagingDir, `${up.uploadId}.part`);
    const changed = readFileSync(staged);
    changed[10] = (changed[10] ?? 0) ^ 1;
    writeFileSync(staged, changed);
    assert.equal(await store.stagedSha256(up), sha256(data), 'no second read of the staged file');
    // …a restarted Station has no running hash and reads what is staged.
    assert.equal(await createDiskStore(where).stagedSha256(up), sha256(changed));
  });

  test('after a restart the next append hashes the staged prefix once and continues', async () => {
    const where = folders();
    const data = randomBytes(2_000_000);
    const up = upload(data.length);
    const before = createDiskStore(where);
    await before.beginStaging(up);
    await before.append(up, 0, pieces(data.subarray(0, 1_234_567)));
    const after = createDiskStore(where);
    assert.equal(await after.stagedBytes(up), 1_234_567);
    await after.append(up, 1_234_567, pieces(data.subarray(1_234_567)));
    assert.equal(await after.stagedSha256(up), sha256(data));
  });

  test('a body past sizeBytes is refused and keeps nothing; the hash stays right', async () => {
    const where = folders();
    const store = createDiskStore(where);
    const data = randomBytes(100_000);
    const up = upload(data.length);
    await store.beginStaging(up);
    await store.append(up, 0, pieces(data.subarray(0, 40_000)));
    await assert.rejects(
      store.append(up, 40_000, pieces(randomBytes(60_001))),
      (e: AppError) => e.status === 400,
    );
    assert.equal(await store.stagedBytes(up), 40_000);
    await store.append(up, 40_000, pieces(data.subarray(40_000)));
    assert.equal(await store.stagedSha256(up), sha256(data));
  });

  test('complete: a taken name is SnapshotExists, also across filesystems; a complete that stopped after its link finishes', async () => {
    const shm = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const where = folders(shm);
    const store = createDiskStore(where);
    const reserved = 'job__2026-11-01T00-00-00Z__abcdef01-2.tar.zst';
    const taken = upload(3, reserved);
    await store.beginStaging(taken);
    await store.append(taken, 0, pieces(Buffer.from('one')));
    const stored = await store.complete(taken);
    assert.equal(stored.filename, reserved);
    assert.equal(stored.sizeBytes, 3);
    assert.ok(!existsSync(join(where.stagingDir, `${taken.uploadId}.part`)), 'the staged file is gone');
    const read = await store.read(stored, { start: 1, end: 2 });
    assert.equal(Buffer.concat(await read.toArray()).toString(), 'ne');

    const second = upload(3, reserved);
    await store.beginStaging(second);
    await store.append(second, 0, pieces(Buffer.from('two')));
    await assert.rejects(store.complete(second), SnapshotExists);
    assert.ok(existsSync(join(where.stagingDir, `${second.uploadId}.part`)), 'the staging area stays');
    const listed = [];
    for await (const file of store.list()) listed.push(file.filename);
    assert.deepEqual(listed, [reserved], 'no -3, no temporary');

    // Staged on the same filesystem: a Station that stopped between the link and removing the
    // staged file completes the upload again, and that is not a taken name.
    const same = folders();
    const local = createDiskStore(same);
    const again = upload(5);
    await local.beginStaging(again);
    await local.append(again, 0, pieces(Buffer.from('again')));
    const staged = join(same.stagingDir, `${again.uploadId}.part`);
    const target = join(same.backupRoot, 'host', 'inst-1', 'job', again.target.filename);
    mkdirSync(dirname(target), { recursive: true });
    linkSync(staged, target);
    assert.equal((await local.complete(again)).filename, again.target.filename);
    assert.ok(!existsSync(staged));
    assert.equal(readFileSync(target, 'utf8'), 'again');
  });

  test('a full staging disk (a 1 MiB tmpfs): 507, what was written is kept, space comes back on reset', async (t) => {
    const staging = mkdtempSync(join(tmpdir(), 'backupd-disk-full-'));
    dirs.push(staging);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', staging]);
    if (mounted.status !== 0) {
      if (process.env.CI === 'true') assert.fail(`cannot mount a tmpfs: ${mounted.stderr}`);
      t.skip('mounting a tmpfs needs root (CAP_SYS_ADMIN)');
      return;
    }
    try {
      const where = { backupRoot: folders().backupRoot, stagingDir: staging };
      const store = createDiskStore(where);
      const data = randomBytes(3 * 1024 * 1024);
      const up = upload(data.length);
      await store.beginStaging(up);
      await assert.rejects(store.append(up, 0, pieces(data)), (e: AppError) => e.status === 507);
      const kept = await store.stagedBytes(up);
      const staged = readFileSync(join(staging, `${up.uploadId}.part`));
      assert.equal(staged.length, kept);
      assert.ok(staged.equals(data.subarray(0, kept)), 'what was kept is the start of the body');
      await store.resetStaging(up);
      const small = randomBytes(300_000);
      const next = upload(small.length);
      await store.abortStaging(up);
      await store.beginStaging(next);
      await store.append(next, 0, pieces(small));
      assert.equal(await store.stagedSha256(next), sha256(small));
    } finally {
      spawnSync('umount', [staging]);
    }
  });

  test('no key reaches outside BACKUP_ROOT', async () => {
    const store = createDiskStore(folders());
    const bad = [
      { scoutId: '..', instanceId: 'i', jobName: 'j', filename: 'a.tar.zst' },
      { scoutId: 's', instanceId: 'i', jobName: 'j', filename: '../a.tar.zst' },
      { scoutId: 's', instanceId: 'i/..', jobName: 'j', filename: 'a.tar.zst' },
    ];
    for (const key of bad) {
      await assert.rejects(store.stat(key), (e: AppError) => e.status === 400, JSON.stringify(key));
      await assert.rejects(store.read(key), (e: AppError) => e.status === 400, JSON.stringify(key));
    }
    await assert.rejects(
      store.stagedBytes({ ...upload(1), uploadId: '../x' }),
      (e: AppError) => e.status === 400,
    );
  });

  test('a listing goes on when a job folder goes while it runs (retention beside a verification run)', async () => {
    const where = folders();
    const names = [
      'job__2026-11-01T00-00-00Z__abcdef01.tar.zst',
      'job__2026-11-02T00-00-00Z__abcdef01.tar.zst',
    ];
    for (const job of ['alpha', 'beta', 'gamma'])
      for (const name of names) {
        const path = join(where.backupRoot, 'host', 'inst-1', job, name.replace('job', job));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, job);
      }
    const listed: string[] = [];
    let gone = '';
    for await (const file of createDiskStore(where).list()) {
      if (!gone) {
        // A job folder the listing has not reached yet (job folders are read one after another).
        gone = ['alpha', 'beta', 'gamma'].find((job) => job !== file.jobName) ?? '';
        rmSync(join(where.backupRoot, 'host', 'inst-1', gone), { recursive: true });
      }
      listed.push(`${file.jobName}/${file.filename}`);
    }
    const jobs = new Set(listed.map((entry) => entry.split('/')[0]));
    assert.equal(listed.length, 4, listed.join(', '));
    assert.equal(jobs.has(gone), false, 'the folder that went is not listed');
  });
});
