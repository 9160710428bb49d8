// Streamed uploads (issue #27, the `streamed` extension of src/shared/protocol/uploads.ts): an
// initiation without size and checksum, chunks as the archive grows, size and SHA-256 checked
// at finalize; a SIGKILL of the Station mid-upload resumes; binding, idempotency and the size
// limit as for a plain upload. Runs on PGlite and on PostgreSQL (upload-suites.ts), and on S3
// (suites-on-s3.test.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { assertError } from '../../helpers/assertions.ts';
import { lapseUploadLeases } from '../../helpers/postgres.ts';
import { storedBytes, storedNames } from '../../helpers/station-store.ts';
import {
  type ArchiveMeta,
  declaration,
  finalize,
  initiate,
  putChunk,
  sendChunks,
  stalledChunk,
  streamedMeta,
} from '../../helpers/uploads.ts';
import { assertOk, assertStoredWhole, instanceId, type StartStation, useStation } from './uploads-kit.ts';

/** MAX_UPLOAD_BYTES of this suite's Station: a streamed upload is held to it as bytes arrive. */
const LIMIT = 4 * 1024 * 1024;
const CHUNK = 256 * 1024;

export function streamedUploadSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'streamed', { MAX_UPLOAD_BYTES: String(LIMIT) });
    const scout = 'stream-scout';

    /** A Station token bound (by its first initiation) to a new instance. */
    async function newInstance() {
      const { credential } = await ctx.mint();
      return { token: credential, inst: instanceId() };
    }

    function streamedOf(
      data: Uint8Array,
      inst: string,
      job: string,
    ): { meta: ArchiveMeta; open: ArchiveMeta } {
      const meta = ctx.meta(data, { scout_id: scout, scout_instance_id: inst, job_name: job });
      return { meta, open: streamedMeta(meta) };
    }

    async function begin(token: string, open: ArchiveMeta): Promise<string> {
      const started = await initiate(ctx.station.url, token, open);
      assertOk(started);
      return started.body.upload_id;
    }

    const send = (token: string, id: string, data: Uint8Array, from = 0) =>
      sendChunks(ctx.station.url, token, id, data, from, CHUNK, (reply) => assertOk(reply));

    test('initiated without size and checksum, appended, finalized with both: stores exactly the bytes', async () => {
      const { token, inst } = await newInstance();
      const data = randomBytes(3 * 1024 * 1024 + 12_345);
      const { meta, open } = streamedOf(data, inst, 'docs');
      const started = await initiate(ctx.station.url, token, open);
      assertOk(started);
      assert.equal(started.body.status, 'receiving');
      assert.equal(started.body.streamed, true);
      assert.equal(started.body.archive_size_bytes, null, 'no size before finalize');
      assert.equal(started.body.next_offset, 0);
      const id = started.body.upload_id;
      await send(token, id, data);
      const done = await finalize(ctx.station.url, token, id, declaration(data));
      await assertStoredWhole(ctx.station, done, meta, { scout, instance: inst, job: 'docs' }, data);
      const listed = await ctx.overviewJob(ctx.admin, scout, inst, 'docs');
      assert.equal(listed?.[0]?.size_bytes, data.length, 'indexed with the size declared at finalize');

      // Idempotent: the same initiation answers stored, so does finalize again.
      const again = await initiate(ctx.station.url, token, open);
      assertOk(again);
      assert.equal(again.body.status, 'stored');
      assert.equal(again.body.stored_as, done.body.stored_as);
      const refinal = await finalize(ctx.station.url, token, id, declaration(data));
      assertOk(refinal);
      assert.equal(refinal.body.stored_as, done.body.stored_as);
    });

    test('wrong size or SHA-256 at finalize: 409 size_mismatch / checksum_mismatch, nothing stored; then the right one stores', async () => {
      const { token, inst } = await newInstance();
      const data = randomBytes(700_000);
      const { open } = streamedOf(data, inst, 'mismatch');
      const at = { scout, instance: inst, job: 'mismatch' };
      const id = await begin(token, open);
      await send(token, id, data);

      assertError(await finalize(ctx.station.url, token, id), 400, /streamed upload is finalized with/);
      // More declared than received: the bytes stay, the rest may follow.
      const more = await finalize(ctx.station.url, token, id, {
        ...declaration(data),
        archive_size_bytes: data.length + 1,
      });
      assertError(more, 409, /send the rest/);
      assert.equal(more.body.code, 'size_mismatch');
      assert.equal(more.body.detail.next_offset, data.length);
      // Less declared than received: the bytes are discarded.
      const less = await finalize(ctx.station.url, token, id, {
        ...declaration(data),
        archive_size_bytes: data.length - 1,
      });
      assertError(less, 409, /discarded/);
      assert.equal(less.body.code, 'size_mismatch');
      assert.equal(less.body.detail.next_offset, 0);
      assert.deepEqual(await storedNames(ctx.station, at), []);

      await send(token, id, data);
      const wrongSha = await finalize(ctx.station.url, token, id, {
        ...declaration(data),
        archive_sha256: '0'.repeat(64),
      });
      assertError(wrongSha, 409, /archive_sha256/);
      assert.equal(wrongSha.body.code, 'checksum_mismatch');
      assert.equal(wrongSha.body.detail.next_offset, 0);
      assert.deepEqual(await storedNames(ctx.station, at), [], 'nothing visible after the mismatches');
      assert.equal(await ctx.overviewJob(ctx.admin, scout, inst, 'mismatch'), undefined);

      const resumed = await initiate(ctx.station.url, token, open);
      assertOk(resumed);
      assert.equal(resumed.body.upload_id, id);
      assert.equal(resumed.body.next_offset, 0);
      await send(token, id, data);
      const done = await finalize(ctx.station.url, token, id, declaration(data));
      assertOk(done);
      assert.ok((await storedBytes(ctx.station, at, done.body.stored_as)).equals(data));
    });

    test('idempotency and binding as for a plain upload', async () => {
      const { token, inst } = await newInstance();
      const data = randomBytes(300_000);
      const { meta, open } = streamedOf(data, inst, 'keys');
      const id = await begin(token, open);
      await send(token, id, data.subarray(0, CHUNK));
      const again = await initiate(ctx.station.url, token, open);
      assertOk(again);
      assert.equal(again.body.upload_id, id, 'the same key resumes the same session');
      assert.equal(again.body.next_offset, CHUNK);
      assertError(await initiate(ctx.station.url, token, meta), 409, /another streamed/);
      assertError(
        await initiate(ctx.station.url, token, { ...open, job_name: 'other' }),
        409,
        /scout_id\/scout_instance_id\/job_name/,
      );
      // The token is bound to its instance by the streamed initiation.
      const elsewhere = await initiate(ctx.station.url, token, {
        ...streamedOf(data, instanceId(), 'keys').open,
      });
      assertError(elsewhere, 409);
      assert.equal(elsewhere.body.code, 'binding_conflict');
      // Given both, `streamed` changes nothing: a plain upload.
      const plain = await initiate(ctx.station.url, token, {
        ...meta,
        streamed: true,
        idempotency_key: 'plain-1',
      });
      assertOk(plain);
      assert.equal(plain.body.archive_size_bytes, data.length);
      assert.equal(plain.body.streamed, undefined);
      // One of the two alone is a 400 naming the other.
      const { archive_sha256: _sha, ...sizeOnly } = meta;
      assertError(
        await initiate(ctx.station.url, token, { ...sizeOnly, streamed: true }),
        400,
        /archive_sha256/,
      );
    });

    test('past MAX_UPLOAD_BYTES: the chunk that passes it is 413, nothing of it kept', async () => {
      const { token, inst } = await newInstance();
      const { open } = streamedOf(Buffer.alloc(1), inst, 'large');
      const id = await begin(token, open);
      const big = randomBytes(LIMIT - CHUNK);
      await send(token, id, big);
      const over = await putChunk(ctx.station.url, token, id, big.length, randomBytes(CHUNK + 1));
      assertError(over, 413, /MAX_UPLOAD_BYTES/);
      const resumed = await initiate(ctx.station.url, token, open);
      assert.equal(resumed.body.next_offset, big.length);
    });

    test('SIGKILL of the Station mid-upload: the same key resumes where the bytes stopped and stores exactly them', async () => {
      const { token, inst } = await newInstance();
      const data = randomBytes(2 * 1024 * 1024 + 777);
      const { open } = streamedOf(data, inst, 'crash');
      const id = await begin(token, open);
      await send(token, id, data.subarray(0, 2 * CHUNK));
      // Killed while a chunk streams in: some of it may have arrived, the rest never does.
      const inFlight = stalledChunk(ctx.station.url, token, id, data, 2 * CHUNK, 100_000);
      await ctx.station.kill();
      await inFlight.cancel();
      await inFlight.status;
      ctx.station = await ctx.station.restart();
      await lapseUploadLeases(ctx.station);
      const resumed = await initiate(ctx.station.url, token, open);
      assertOk(resumed);
      assert.equal(resumed.body.upload_id, id);
      const next: number = resumed.body.next_offset;
      assert.ok(next >= 2 * CHUNK && next <= 2 * CHUNK + 100_000, `resumes at ${next}`);
      await send(token, id, data, next);
      const done = await finalize(ctx.station.url, token, id, declaration(data));
      assertOk(done);
      const stored = await storedBytes(
        ctx.station,
        { scout, instance: inst, job: 'crash' },
        done.body.stored_as,
      );
      assert.ok(stored.equals(data), 'byte-identical after the kill');
    });
  });
}
