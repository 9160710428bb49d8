// The upload services without a server: initiate → chunk → finalize, a restart between
// chunks, checksum mismatch, interrupted and over-long chunks, the name reserved at initiation,
// the upload lease, retention and the 24-hour sweep, with the clock moved by the test.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, mock, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { HOUR_MS } from '../../../src/core/clock.ts';
import { AppError } from '../../../src/core/errors.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { leases, uploadSessions } from '../../../src/station/db/station-tables.ts';
import { TOUCH_EVERY_MS } from '../../../src/station/uploads/chunk.ts';
import { ABANDONED_AFTER_MS, processLock } from '../../../src/station/uploads/index.ts';
import { LEASE_MS } from '../../../src/station/uploads/upload-lease.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { bodyFor, bodyOf, brokenBodyOf, type Kit, openKit } from './upload-services-kit.ts';

/** The AppError `work` rejects with. */
async function appError(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

const detailOf = (error: AppError) => error.detail as Record<string, unknown>;

describe('upload services (in process, PGlite, disk store, fixed clock)', () => {
  let kit: Kit;
  let instance = 0;
  /** A fresh instance per test, so jobs and retention do not meet. */
  const fresh = (data: Uint8Array, extra = {}) => {
    instance += 1;
    return bodyFor(data, { scout_instance_id: `inst${String(instance).padStart(16, '0')}`, ...extra });
  };
  const row = async (uploadId: string) =>
    (
      await kit.storage.stationDb.select().from(uploadSessions).where(eq(uploadSessions.uploadId, uploadId))
    )[0];

  before(async () => {
    kit = await openKit();
  });
  after(async () => {
    await kit?.close();
  });

  test('initiate, two chunks, finalize: stored under the reserved name, staged file gone', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 123);
    const meta = fresh(data);
    const started = await kit.uploads.initiate(kit.token, meta);
    assert.equal(started.status, 'receiving');
    assert.equal(started.next_offset, 0);
    const session = await row(started.upload_id);
    assert.equal(
      session?.targetName,
      `documents__${meta.timestamp.replaceAll(':', '-')}__${meta.fingerprint.slice(0, 8)}.tar.zst`,
    );
    const cut = 1024 * 1024 + 7;
    const first = await kit.uploads.chunk(kit.token, started.upload_id, 0, bodyOf(data.subarray(0, cut)));
    assert.deepEqual(first, {
      upload_id: started.upload_id,
      status: 'receiving',
      next_offset: cut,
      received_bytes: cut,
    });
    const second = await kit.uploads.chunk(kit.token, started.upload_id, cut, bodyOf(data.subarray(cut)));
    assert.equal(second.status, 'complete');
    assert.equal(second.next_offset, data.length);
    const done = await kit.uploads.finalize(kit.token, started.upload_id);
    assert.equal(done.status, 'stored');
    assert.equal(done.stored_as, session?.targetName);
    const path = join(
      kit.backupRoot,
      meta.scout_id,
      meta.scout_instance_id,
      meta.job_name,
      String(done.stored_as),
    );
    assert.ok(readFileSync(path).equals(data), 'the stored file holds the uploaded bytes');
    assert.deepEqual(readdirSync(kit.stagingDir), [], 'nothing left in staging');
    const indexed = await kit.index.byName(
      { scoutId: meta.scout_id, instanceId: meta.scout_instance_id, jobName: meta.job_name },
      String(done.stored_as),
    );
    assert.equal(indexed?.sha256, meta.archive_sha256);
    assert.equal(indexed?.storedAt, kit.clock.now(), 'stored at the injected clock');
    assert.deepEqual(await kit.storage.stationDb.select().from(leases), [], 'the lease is released');
    // Finalize again: the same answer, nothing stored twice.
    assert.equal((await kit.uploads.finalize(kit.token, started.upload_id)).stored_as, done.stored_as);
  });

  test('a restart between chunks loses nothing: the hash continues from the staged bytes', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const meta = fresh(data);
    const { upload_id } = await kit.uploads.initiate(kit.token, meta);
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data.subarray(0, 700_000)));
    kit.restart();
    const resumed = await kit.uploads.initiate(kit.token, meta);
    assert.equal(resumed.upload_id, upload_id);
    assert.equal(resumed.next_offset, 700_000);
    await kit.uploads.chunk(kit.token, upload_id, 700_000, bodyOf(data.subarray(700_000)));
    kit.restart();
    const done = await kit.uploads.finalize(kit.token, upload_id);
    assert.equal(done.status, 'stored', 'the SHA-256 matched after two restarts');
  });

  test('checksum mismatch: 409 checksum_mismatch, staged bytes discarded, the upload restarts at 0', async () => {
    const data = randomBytes(100_000);
    const meta = fresh(data);
    const { upload_id } = await kit.uploads.initiate(kit.token, meta);
    const wrong = Buffer.from(data);
    wrong[5] = (wrong[5] ?? 0) ^ 0xff;
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(wrong));
    const error = await appError(kit.uploads.finalize(kit.token, upload_id));
    assert.equal(error.status, 409);
    assert.equal(detailOf(error).status, 'checksum_mismatch');
    assert.equal(detailOf(error).next_offset, 0);
    assert.match(kit.events.failed.at(-1) ?? '', /did not match archive_sha256/);
    assert.equal((await kit.uploads.initiate(kit.token, meta)).next_offset, 0);
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data));
    assert.equal((await kit.uploads.finalize(kit.token, upload_id)).status, 'stored');
  });

  test("a streamed upload holds its job's newest snapshot's size (0 for a first); finalize keeps the declared size", async () => {
    const first = randomBytes(200_000);
    const meta = fresh(first);
    const { archive_size_bytes: _size, archive_sha256: _sha, ...open } = meta;
    const started = await kit.uploads.initiate(kit.token, { ...open, streamed: true });
    assert.equal(started.archive_size_bytes, null);
    assert.equal((await row(started.upload_id))?.reservedBytes, 0, "a job's first upload: nothing to go by");
    await kit.uploads.chunk(kit.token, started.upload_id, 0, bodyOf(first));
    const done = await kit.uploads.finalize(kit.token, started.upload_id, {
      archive_size_bytes: first.length,
      archive_sha256: sha256(first),
    });
    assert.equal(done.status, 'stored');
    const stored = await row(started.upload_id);
    assert.equal(stored?.archiveSizeBytes, first.length);
    assert.equal(stored?.archiveSha256, sha256(first));

    kit.clock.advance(60_000);
    const second = await kit.uploads.initiate(kit.token, {
      ...open,
      idempotency_key: `${open.idempotency_key}-2`,
      timestamp: utcSecond(kit.clock.now() - 1000),
      streamed: true,
    });
    assert.equal((await row(second.upload_id))?.reservedBytes, first.length, "the newest snapshot's size");
  });

  test('offset mismatch, interrupted and over-long chunks', async () => {
    const data = randomBytes(500_000);
    const meta = fresh(data);
    const { upload_id } = await kit.uploads.initiate(kit.token, meta);
    const mismatch = await appError(kit.uploads.chunk(kit.token, upload_id, 10, bodyOf(data)));
    assert.equal(mismatch.status, 409);
    assert.deepEqual(
      { status: detailOf(mismatch).status, next_offset: detailOf(mismatch).next_offset },
      { status: 'offset_mismatch', next_offset: 0 },
    );
    // The client goes away after 200,000 bytes: they are kept.
    const broken = await appError(
      kit.uploads.chunk(kit.token, upload_id, 0, brokenBodyOf(data.subarray(0, 200_000))),
    );
    assert.equal(broken.status, 400);
    assert.match(String(broken.detail), /ended early/);
    assert.equal((await kit.uploads.initiate(kit.token, meta)).next_offset, 200_000);
    // A chunk longer than what is left keeps nothing.
    const tooLong = await appError(
      kit.uploads.chunk(
        kit.token,
        upload_id,
        200_000,
        bodyOf(Buffer.concat([data.subarray(200_000), Buffer.alloc(10)])),
      ),
    );
    assert.equal(tooLong.status, 400);
    assert.match(String(tooLong.detail), /runs past archive_size_bytes/);
    assert.equal((await kit.uploads.initiate(kit.token, meta)).next_offset, 200_000);
    await kit.uploads.chunk(kit.token, upload_id, 200_000, bodyOf(data.subarray(200_000)));
    assert.equal((await kit.uploads.finalize(kit.token, upload_id)).status, 'stored');
  });

  test('the same time and fingerprint with other bytes reserves -2 at initiation', async () => {
    const first = randomBytes(1000);
    const meta = fresh(first);
    const one = await kit.uploads.initiate(kit.token, meta);
    await kit.uploads.chunk(kit.token, one.upload_id, 0, bodyOf(first));
    const stored = await kit.uploads.finalize(kit.token, one.upload_id);
    const second = randomBytes(1000);
    const again = {
      ...meta,
      archive_sha256: bodyFor(second).archive_sha256,
      idempotency_key: `key-${randomBytes(4).toString('hex')}`,
    };
    const two = await kit.uploads.initiate(kit.token, again);
    const reserved = (await row(two.upload_id))?.targetName;
    assert.equal(reserved, String(stored.stored_as).replace('.tar.zst', '-2.tar.zst'));
    await kit.uploads.chunk(kit.token, two.upload_id, 0, bodyOf(second));
    assert.equal((await kit.uploads.finalize(kit.token, two.upload_id)).stored_as, reserved);
  });

  test("a replicated copy keeps the primary's name: taken meanwhile, complete is 409 and overwrites nothing; held already, open refuses before a byte", async () => {
    const data = randomBytes(5000);
    const meta = fresh(data);
    const source = {
      scoutId: meta.scout_id,
      instanceId: meta.scout_instance_id,
      jobName: meta.job_name,
      filename: `${meta.job_name}__2026-11-01T12-00-00Z__${meta.fingerprint.slice(0, 8)}.tar.zst`,
      sizeBytes: data.length,
      sha256: meta.archive_sha256,
      fingerprint: meta.fingerprint,
      keyFingerprint: null,
      takenAt: Date.UTC(2026, 10, 1, 12),
      storedAt: Date.UTC(2026, 10, 1, 12),
    };
    const { session, next } = await kit.uploads.copies.open(source);
    assert.equal(next, 0);
    await kit.uploads.copies.append(session, 0, bodyOf(data));
    const folder = join(kit.backupRoot, source.scoutId, source.instanceId, source.jobName);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, source.filename), 'put there by hand');

    const refused = await appError(kit.uploads.copies.complete(session, source.storedAt));
    assert.equal(refused.status, 409);
    assert.match(String(refused.detail), /already stored/);
    assert.equal(readFileSync(join(folder, source.filename), 'utf8'), 'put there by hand');
    assert.deepEqual(readdirSync(folder), [source.filename], 'no -2');
    assert.equal(await row(session.uploadId), undefined, 'the session gave its name up');
    assert.ok(!existsSync(join(kit.stagingDir, `${session.uploadId}.part`)), 'its staged bytes are gone');

    const again = await appError(kit.uploads.copies.open(source));
    assert.equal(again.status, 409);
    assert.match(String(again.detail), /already stored here/);
  });

  test('chunks of one upload take turns (the lease); a lapsed lease is taken over', async () => {
    const data = randomBytes(300_000);
    const meta = fresh(data);
    const { upload_id } = await kit.uploads.initiate(kit.token, meta);
    const replies = await Promise.allSettled([
      kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data)),
      kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data)),
    ]);
    const ok = replies.filter((r) => r.status === 'fulfilled');
    const refused = replies.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(ok.length, 1, 'one chunk is written');
    assert.equal(refused.length, 1);
    assert.equal(detailOf(refused[0]?.reason).status, 'offset_mismatch');
    assert.equal(
      detailOf(refused[0]?.reason).next_offset,
      data.length,
      'the second saw the first one complete',
    );
    // A Station that died holding the lease blocks only until it lapses.
    await kit.storage.stationDb
      .insert(leases)
      .values({ name: `upload:${upload_id}`, holder: 'dead-station', until: Date.now() - 1 });
    assert.equal((await kit.uploads.finalize(kit.token, upload_id)).status, 'stored');
  });

  test('a renewal that finds the lease taken stops the chunk: nothing more is written or saved', async () => {
    const data = randomBytes(200_000);
    const { upload_id } = await kit.uploads.initiate(kit.token, fresh(data));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const body = Readable.from(
      (async function* () {
        yield data.subarray(0, 100_000);
        await gate;
        yield data.subarray(100_000);
      })(),
    );
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const writing = kit.uploads.chunk(kit.token, upload_id, 0, body);
      const staged = join(kit.stagingDir, `${upload_id}.part`);
      for (let i = 0; i < 6000 && (statSync(staged, { throwIfNoEntry: false })?.size ?? 0) < 100_000; i += 1)
        await new Promise((r) => setTimeout(r, 10));
      // Another request took the lease (this one stood still past it).
      await kit.storage.stationDb.update(leases).set({ holder: 'another request' });
      mock.timers.tick(LEASE_MS / 3);
      // PGlite answers queries in order: these come back after the renewal's.
      await kit.storage.stationDb.select().from(leases);
      await kit.storage.stationDb.select().from(leases);
      // The rest of the body arrives after the renewal found the lease gone.
      open();
      const error = await appError(writing);
      assert.equal(error.status, 409);
      assert.deepEqual(detailOf(error).status, 'offset_mismatch');
      assert.equal(detailOf(error).next_offset, 100_000);
      assert.equal(statSync(staged).size, 100_000, 'the rest of the body was not written');
    } finally {
      mock.timers.reset();
      await kit.storage.stationDb.delete(leases);
    }
  });

  test('on PGlite the chunks take turns in memory: the second waits, then sees offset_mismatch', async () => {
    const uploads = kit.uploadsWith(processLock());
    const data = randomBytes(300_000);
    const { upload_id } = await uploads.initiate(kit.token, fresh(data));
    const replies = await Promise.allSettled([
      uploads.chunk(kit.token, upload_id, 0, bodyOf(data)),
      uploads.chunk(kit.token, upload_id, 0, bodyOf(data)),
    ]);
    assert.equal(replies[0]?.status, 'fulfilled');
    const second = replies[1] as PromiseRejectedResult;
    assert.equal(detailOf(second.reason).status, 'offset_mismatch');
    assert.equal(detailOf(second.reason).next_offset, data.length);
    assert.deepEqual(await kit.storage.stationDb.select().from(leases), [], 'no lease was taken');
    assert.equal((await uploads.finalize(kit.token, upload_id)).status, 'stored');
  });

  test('retention: keep_last prunes the oldest on finalize; keep_within_days protects young ones', async () => {
    const calendarOff = {
      retention_keep_daily: 0,
      retention_keep_weekly: 0,
      retention_keep_monthly: 0,
      retention_keep_yearly: 0,
    };
    await kit.settings.replace({ ...calendarOff, retention_keep_last: 2, retention_keep_within_days: 0 });
    const names: string[] = [];
    instance += 1;
    const inst = `inst${String(instance).padStart(16, '0')}`;
    const ref = { scout_instance_id: inst, job_name: 'mail' };
    let pruned: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      const data = randomBytes(1000);
      const meta = bodyFor(data, { ...ref, timestamp: `2026-11-0${n + 1}T00:00:00Z` });
      const { upload_id } = await kit.uploads.initiate(kit.token, meta);
      await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data));
      const done = await kit.uploads.finalize(kit.token, upload_id);
      names.push(String(done.stored_as));
      pruned = done.pruned;
      kit.clock.advance(24 * HOUR_MS); // one a day: the no-flush rule for one day's uploads stays out
    }
    assert.deepEqual(pruned, [names[0]], 'the oldest by its own time goes');
    const dir = join(kit.backupRoot, 'host-a', inst, 'mail');
    assert.deepEqual(readdirSync(dir).sort(), [names[1], names[2]].sort());

    // Kept within 30 days: nothing goes while the snapshots are younger than that (by the clock).
    await kit.settings.replace({ ...calendarOff, retention_keep_last: 1, retention_keep_within_days: 30 });
    const jobRef = { scoutId: 'host-a', instanceId: inst, jobName: 'mail' };
    assert.deepEqual(await kit.uploads.applyRetention(jobRef, String(names[2])), []);
    kit.clock.advance(31 * 24 * HOUR_MS);
    assert.deepEqual(await kit.uploads.applyRetention(jobRef, String(names[2])), [names[1]]);
    kit.clock.advance(-34 * 24 * HOUR_MS);
    await kit.settings.replace({});
  });

  test("received bytes save the session's last activity at most once a minute (TOUCH_EVERY_MS)", async () => {
    const data = randomBytes(30_000);
    const { upload_id } = await kit.uploads.initiate(kit.token, fresh(data));
    const started = (await row(upload_id))?.updatedAt ?? 0;
    kit.clock.advance(TOUCH_EVERY_MS - 1);
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data.subarray(0, 10_000)));
    assert.equal((await row(upload_id))?.updatedAt, started, 'a chunk within the minute writes nothing');
    kit.clock.advance(1);
    await kit.uploads.chunk(kit.token, upload_id, 10_000, bodyOf(data.subarray(10_000, 20_000)));
    assert.equal((await row(upload_id))?.updatedAt, started + TOUCH_EVERY_MS, 'a minute later it is saved');
    const done = await kit.uploads.chunk(kit.token, upload_id, 20_000, bodyOf(data.subarray(20_000)));
    assert.equal(done.status, 'complete');
    assert.equal((await kit.uploads.finalize(kit.token, upload_id)).status, 'stored');
  });

  test('the sweep: an upload idle for 24 hours is removed with its staged bytes, not one idle for 23', async () => {
    const data = randomBytes(50_000);
    const meta = fresh(data);
    const { upload_id } = await kit.uploads.initiate(kit.token, meta);
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data.subarray(0, 10_000)));
    const staged = join(kit.stagingDir, `${upload_id}.part`);
    assert.ok(existsSync(staged));
    kit.clock.advance(23 * HOUR_MS);
    await kit.uploads.sweep();
    assert.ok(await row(upload_id), 'kept at 23 hours');
    assert.ok(existsSync(staged));
    kit.clock.advance(ABANDONED_AFTER_MS - 23 * HOUR_MS + 1);
    await kit.uploads.sweep();
    assert.equal(await row(upload_id), undefined, 'the session is gone after 24 hours');
    assert.ok(!existsSync(staged), 'and its staged bytes');
    const gone = await appError(
      kit.uploads.chunk(kit.token, upload_id, 10_000, bodyOf(data.subarray(10_000))),
    );
    assert.equal(gone.status, 404);
  });

  test('start-up reconciliation removes staged files of no session and keeps live ones', async () => {
    const data = randomBytes(20_000);
    const { upload_id } = await kit.uploads.initiate(kit.token, fresh(data));
    await kit.uploads.chunk(kit.token, upload_id, 0, bodyOf(data.subarray(0, 5000)));
    writeFileSync(join(kit.stagingDir, 'no-such-upload.part'), 'left over');
    kit.restart();
    await kit.uploads.reconcileStaging();
    assert.deepEqual(readdirSync(kit.stagingDir), [`${upload_id}.part`]);
  });
});
