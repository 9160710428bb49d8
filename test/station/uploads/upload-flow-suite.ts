// The upload protocol end to end over HTTP: initiate, resume, chunks, finalize, duplicates,
// -2/-3 names, checksum mismatch (docs/protocol.md: Upload; docs/extensions.md:
// Storage). Runs on PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertError } from '../../helpers/assertions.ts';
import { sha256 } from '../../helpers/hashes.ts';
import {
  onS3,
  putSnapshot,
  snapshotExists,
  storedBytes,
  storedNames,
  storedUnder,
} from '../../helpers/station-store.ts';
import { type ArchiveMeta, archiveMeta, call, finalize, initiate, putChunk } from '../../helpers/uploads.ts';
import {
  assertOk,
  expectedName,
  filesIn,
  instanceId,
  MAX_UPLOAD,
  nextTimestamp,
  STORED_NAME,
  type StartStation,
  unique,
  useStation,
} from './uploads-kit.ts';

export function uploadFlowSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'main', { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    const { mint, overviewJob, store, meta } = ctx;

    describe('upload flow', () => {
      test('initiate, chunks, finalize: fields, offsets, the stored file and idempotent repeats', async () => {
        const { credential } = await mint(ctx.admin, {});
        const other = await mint(ctx.admin, {});
        const scout = unique('flow');
        const inst = instanceId();
        const size = 300_000;
        const data = randomBytes(size);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });

        const started = await initiate(ctx.station.url, credential, m);
        assertOk(started);
        const id = started.body.upload_id;
        assert.equal(typeof id, 'string');
        assert.ok(id.length > 0);
        assert.equal(started.body.status, 'receiving');
        assert.equal(started.body.next_offset, 0);
        assert.equal(started.body.archive_size_bytes, size);
        assert.ok(
          Number.isSafeInteger(started.body.recommended_chunk_size_bytes) &&
            started.body.recommended_chunk_size_bytes > 0,
          `recommended_chunk_size_bytes ${started.body.recommended_chunk_size_bytes}`,
        );
        assert.deepEqual(started.body.pruned, []);
        assert.equal(started.body.duplicate, false);
        assert.equal(started.body.stored_as ?? undefined, undefined, 'no stored_as before storing');

        const c1 = await putChunk(ctx.station.url, credential, id, 0, data.subarray(0, 100_000));
        assertOk(c1);
        assert.deepEqual(
          {
            upload_id: c1.body.upload_id,
            status: c1.body.status,
            next_offset: c1.body.next_offset,
            received_bytes: c1.body.received_bytes,
          },
          { upload_id: id, status: 'receiving', next_offset: 100_000, received_bytes: 100_000 },
        );

        // Offsets that do not match what was received.
        for (const offset of [0, 50_000, 100_001, 200_000]) {
          const wrong = await putChunk(
            ctx.station.url,
            credential,
            id,
            offset,
            data.subarray(offset, offset + 1000),
          );
          assertError(wrong, 409);
          assert.equal(wrong.body.detail.status, 'offset_mismatch', JSON.stringify(wrong.body));
          assert.equal(wrong.body.detail.next_offset, 100_000, JSON.stringify(wrong.body));
        }
        // A chunk running past archive_size_bytes is refused and leaves nothing behind.
        assertError(
          await putChunk(ctx.station.url, credential, id, 100_000, randomBytes(size - 100_000 + 1)),
          400,
          /archive_size_bytes|past|exceed|size/i,
        );
        const resumed = await initiate(ctx.station.url, credential, m);
        assertOk(resumed);
        assert.equal(resumed.body.upload_id, id, 'same idempotency_key resumes the same upload');
        assert.equal(resumed.body.status, 'receiving');
        assert.equal(resumed.body.next_offset, 100_000);
        assert.equal(resumed.body.duplicate, false);

        // Bad offsets and unknown uploads.
        for (const query of ['offset=-1', 'offset=abc', 'offset=1.5', '']) {
          const reply = await call(
            ctx.station.url,
            'PUT',
            `/backup/uploads/${id}/chunk?${query}`,
            credential,
            data.subarray(0, 10),
          );
          assertError(reply, 400, /offset/);
        }
        assertError(
          await putChunk(ctx.station.url, credential, 'no-such-upload', 0, data.subarray(0, 10)),
          404,
        );
        assertError(await finalize(ctx.station.url, credential, 'no-such-upload'), 404);

        // Chunk and finalize belong to the token that owns the session.
        assertError(
          await putChunk(ctx.station.url, other.credential, id, 100_000, data.subarray(100_000, 110_000)),
          403,
        );
        assertError(await finalize(ctx.station.url, other.credential, id), 403);

        // Finalizing too early.
        const early = await finalize(ctx.station.url, credential, id);
        assertError(early, 409);
        if (typeof early.body.detail === 'object') assert.equal(early.body.detail.next_offset, 100_000);

        const c2 = await putChunk(ctx.station.url, credential, id, 100_000, data.subarray(100_000, 200_000));
        assertOk(c2);
        assert.equal(c2.body.status, 'receiving');
        assert.equal(c2.body.next_offset, 200_000);
        assert.equal(c2.body.received_bytes, 100_000);
        const c3 = await putChunk(ctx.station.url, credential, id, 200_000, data.subarray(200_000));
        assertOk(c3);
        assert.equal(c3.body.status, 'complete');
        assert.equal(c3.body.next_offset, size);
        assert.equal(c3.body.received_bytes, size - 200_000);

        const complete = await initiate(ctx.station.url, credential, m);
        assertOk(complete);
        assert.equal(complete.body.status, 'complete');
        assert.equal(complete.body.next_offset, size);

        const done = await finalize(ctx.station.url, credential, id);
        assertOk(done);
        assert.equal(done.body.status, 'stored');
        assert.equal(done.body.stored_as, expectedName(m));
        assert.match(done.body.stored_as, STORED_NAME);
        assert.deepEqual(done.body.pruned, []);
        assert.equal(done.body.duplicate, false);
        assert.notEqual(done.body.unusual, true, 'a first snapshot is not unusual');

        const at = { scout, instance: inst, job: 'docs' };
        assert.ok(
          await snapshotExists(ctx.station, at, done.body.stored_as),
          `stored as ${done.body.stored_as}`,
        );
        assert.ok(
          (await storedBytes(ctx.station, at, done.body.stored_as)).equals(data),
          'the stored snapshot is byte-identical',
        );
        assert.deepEqual(await storedNames(ctx.station, at), [done.body.stored_as]);

        // Repeats are idempotent.
        const again = await finalize(ctx.station.url, credential, id);
        assertOk(again);
        assert.equal(again.body.status, 'stored');
        assert.equal(again.body.stored_as, done.body.stored_as);
        const reinit = await initiate(ctx.station.url, credential, m);
        assertOk(reinit);
        assert.equal(reinit.body.status, 'stored');
        assert.equal(reinit.body.stored_as, done.body.stored_as);
        assert.deepEqual(await storedNames(ctx.station, at), [done.body.stored_as]);

        const listed = await overviewJob(ctx.admin, scout, inst, 'docs');
        assert.equal(listed?.length, 1, JSON.stringify(listed));
        assert.equal(listed?.[0]?.name, done.body.stored_as);
        assert.equal(listed?.[0]?.size_bytes, size);
        assert.ok(Number.isFinite(Date.parse(listed?.[0]?.mtime ?? '')), `mtime ${listed?.[0]?.mtime ?? ''}`);
      });

      test('reusing an idempotency_key with another checksum, size or namespace is 409', async () => {
        const { credential } = await mint(ctx.admin, { shared: true, max_registrations: 10 });
        const scout = unique('idem');
        const inst = instanceId();
        const data = randomBytes(50_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });
        assertOk(await initiate(ctx.station.url, credential, m));
        assertOk(
          await putChunk(
            ctx.station.url,
            credential,
            (await initiate(ctx.station.url, credential, m)).body.upload_id,
            0,
            data.subarray(0, 20_000),
          ),
        );

        const variants: Array<Partial<ArchiveMeta>> = [
          { archive_sha256: sha256(randomBytes(10)) },
          { archive_size_bytes: data.length + 1 },
          { job_name: 'other-job' },
          { scout_instance_id: instanceId() },
          { scout_id: unique('idem') },
        ];
        for (const change of variants) {
          assertError(await initiate(ctx.station.url, credential, { ...m, ...change }), 409, /idempotency/i);
        }
        const resumed = await initiate(ctx.station.url, credential, m);
        assertOk(resumed);
        assert.equal(resumed.body.next_offset, 20_000, 'the original upload is untouched');
      });

      test('identical bytes under a new key are a duplicate: stored_as of the first, nothing new on disk', async () => {
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('dup');
        const inst = instanceId();
        const data = randomBytes(120_000);
        const first = await store(
          ctx.station.url,
          credential,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        const at = { scout, instance: inst, job: 'docs' };
        assert.deepEqual(await storedNames(ctx.station, at), [first.stored_as]);

        const second = await initiate(
          ctx.station.url,
          credential,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        assertOk(second);
        assert.equal(second.body.status, 'stored', JSON.stringify(second.body));
        assert.equal(second.body.duplicate, true);
        assert.equal(second.body.stored_as, first.stored_as);
        assert.deepEqual(second.body.pruned, []);
        assert.deepEqual(await storedNames(ctx.station, at), [first.stored_as], 'nothing new stored');
        const fin = await finalize(ctx.station.url, credential, second.body.upload_id);
        assertOk(fin);
        assert.equal(fin.body.status, 'stored');
        assert.equal(fin.body.stored_as, first.stored_as);
        assert.deepEqual(await storedNames(ctx.station, at), [first.stored_as]);
        assert.equal((await overviewJob(ctx.admin, scout, inst, 'docs'))?.length, 1);
      });

      test('same timestamp and fingerprint with different bytes is stored as -2, -3', async () => {
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('clash');
        const inst = instanceId();
        const timestamp = nextTimestamp();
        const fingerprint = sha256(randomBytes(8));
        const blobs = [randomBytes(60_000), randomBytes(60_000), randomBytes(60_000)];
        const names: string[] = [];
        for (const blob of blobs) {
          const m = archiveMeta(blob, {
            scout_id: scout,
            scout_instance_id: inst,
            job_name: 'docs',
            timestamp,
            fingerprint,
          });
          names.push((await store(ctx.station.url, credential, blob, m)).stored_as);
        }
        const base = `docs__${timestamp.replaceAll(':', '-')}__${fingerprint.slice(0, 8)}`;
        assert.deepEqual(names, [`${base}.tar.zst`, `${base}-2.tar.zst`, `${base}-3.tar.zst`]);
        const at = { scout, instance: inst, job: 'docs' };
        for (const [i, name] of names.entries()) {
          assert.ok(
            (await storedBytes(ctx.station, at, name)).equals(blobs[i] as Buffer),
            `${name} holds its own bytes`,
          );
        }
      });
      test('a name taken after initiation reserved it (a file put there by hand): finalize is 409 and overwrites nothing; initiating again reserves -2', async () => {
        const { credential } = await mint(ctx.admin, {});
        const at = { scout: unique('taken'), instance: instanceId(), job: 'docs' };
        const data = randomBytes(80_000);
        const m = meta(data, { scout_id: at.scout, scout_instance_id: at.instance, job_name: at.job });
        const started = await initiate(ctx.station.url, credential, m);
        assertOk(started);
        assertOk(await putChunk(ctx.station.url, credential, started.body.upload_id, 0, data));
        const reserved = expectedName(m);
        const other = randomBytes(500);
        await putSnapshot(ctx.station, at, reserved, other);

        // The same on the disk and in a bucket: the store refuses the name, the upload says so.
        const refused = await finalize(ctx.station.url, credential, started.body.upload_id);
        assertError(refused, 409, new RegExp(`${reserved.replaceAll('.', '\\.')} is already stored`));
        assert.ok(
          (await storedBytes(ctx.station, at, reserved)).equals(other),
          'the file put there is untouched',
        );
        // The session gave its name up: the same idempotency key starts again under a free name.
        const again = await initiate(ctx.station.url, credential, m);
        assertOk(again);
        assert.notEqual(again.body.upload_id, started.body.upload_id);
        assert.equal(again.body.next_offset, 0);
        assertOk(await putChunk(ctx.station.url, credential, again.body.upload_id, 0, data));
        const stored = await finalize(ctx.station.url, credential, again.body.upload_id);
        assertOk(stored);
        assert.equal(stored.body.stored_as, reserved.replace('.tar.zst', '-2.tar.zst'));
        assert.deepEqual(await storedNames(ctx.station, at), [reserved, stored.body.stored_as].sort());
        assert.ok((await storedBytes(ctx.station, at, stored.body.stored_as)).equals(data));
      });
    });

    // ------------------------------------------------------------------ checksum mismatch

    describe('checksum mismatch', () => {
      test('a wrong archive_sha256 is 409 checksum_mismatch; the bytes are discarded and nothing is stored', async () => {
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('mismatch');
        const inst = instanceId();
        const data = randomBytes(150_000);
        const m = meta(data, {
          scout_id: scout,
          scout_instance_id: inst,
          job_name: 'docs',
          archive_sha256: sha256(randomBytes(16)),
        });
        const started = await initiate(ctx.station.url, credential, m);
        assertOk(started);
        const id = started.body.upload_id;
        assertOk(await putChunk(ctx.station.url, credential, id, 0, data.subarray(0, 100_000)));
        const last = await putChunk(ctx.station.url, credential, id, 100_000, data.subarray(100_000));
        assertOk(last);
        assert.equal(last.body.status, 'complete');

        const fin = await finalize(ctx.station.url, credential, id);
        assertError(fin, 409);
        assert.equal(typeof fin.body.detail, 'object', JSON.stringify(fin.body));
        assert.equal(fin.body.detail.status, 'checksum_mismatch');
        assert.equal(fin.body.detail.next_offset, 0);
        assert.equal(typeof fin.body.detail.message, 'string');
        assert.ok(fin.body.detail.message.length > 0);

        const again = await initiate(ctx.station.url, credential, m);
        assertOk(again);
        assert.equal(again.body.upload_id, id);
        assert.equal(again.body.next_offset, 0, 'the same idempotency_key starts again at 0');
        assert.equal(again.body.status, 'receiving');
        const probe = await putChunk(ctx.station.url, credential, id, 100_000, data.subarray(0, 10));
        assertError(probe, 409);
        assert.equal(probe.body.detail.next_offset, 0);

        assert.deepEqual(await storedUnder(ctx.station, scout), [], 'nothing stored for the Scout');
        assert.equal((await overviewJob(ctx.admin, scout, inst, 'docs'))?.length ?? 0, 0);
        // Staged bytes discarded: next_offset 0 above is what the store holds; on disk, no staged
        // file holds the archive any more either.
        if (!onS3()) {
          for (const name of filesIn(join(ctx.station.dataDir, 'staging'))) {
            assert.notEqual(
              statSync(join(ctx.station.dataDir, 'staging', name)).size,
              data.length,
              `${name} still staged`,
            );
          }
        }

        // Sending the bytes again gets the same verdict, from offset 0.
        assertOk(await putChunk(ctx.station.url, credential, id, 0, data));
        assertError(await finalize(ctx.station.url, credential, id), 409, /checksum_mismatch/);
      });
    });

    // ------------------------------------------------------------------ limits
  });
}
