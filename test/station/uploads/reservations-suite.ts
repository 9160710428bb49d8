// What one Station token and one Scout instance may hold reserved in staging (issue #13): a
// new upload of an instance and job supersedes its older unfinished one, a reservation lapses
// after an hour without received bytes, and only received bytes keep a session from the 24 h
// sweep (empty chunks and repeated initiations do not). One Station per file; the clock moves.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HOUR_MS } from '../../../src/core/clock.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { adminClient, type Client } from '../../helpers/http.ts';
import type { ServerOptions, TestServer } from '../../helpers/server.ts';
import { diskOnly, stagingAreas } from '../../helpers/station-store.ts';
import { type ArchiveMeta, archiveMeta, initiate, putChunk } from '../../helpers/uploads.ts';

const MINUTE_MS = 60 * 1000;
const GIB = 1024 ** 3;

export type StartStation = (options: ServerOptions) => Promise<TestServer>;

export function reservationsSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    let tokenA: string;
    let tokenB: string;
    let stamp = 0;

    const staged = (uploadId: string) => join(station.dataDir, 'staging', `${uploadId}.part`);

    async function mint(): Promise<string> {
      const reply = await admin.post('/api/credentials/mint', {});
      assert.equal(reply.status, 201, reply.text);
      return reply.body.credential;
    }

    /** Free staging bytes as the Station reports them. */
    async function freeBytes(): Promise<number> {
      const health = await fetch(`${station.url}/health`);
      const body = (await health.json()) as { storage: { free_bytes: number } };
      return body.storage.free_bytes;
    }

    /** Metadata for an upload of `instance`/`job` declaring `size` bytes (only a few are ever sent). */
    function declared(instance: string, job: string, size: number): ArchiveMeta {
      stamp += 1;
      const timestamp = utcSecond(Date.UTC(2026, 0, 1, 0, 0, stamp));
      return archiveMeta(randomBytes(16), {
        scout_id: 'reserve-scout',
        scout_instance_id: instance,
        job_name: job,
        archive_size_bytes: size,
        timestamp,
      });
    }

    /** Initiates and asserts 200; returns the upload id. */
    async function started(token: string, meta: ArchiveMeta): Promise<string> {
      const reply = await initiate(station.url, token, meta);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body.upload_id;
    }

    function advance(ms: number): void {
      station.advanceClock(ms);
    }

    before(async () => {
      station = await start({ env: { MAX_UPLOAD_BYTES: '1000000000000000' } });
      admin = await adminClient(station.url);
      [tokenA, tokenB] = [await mint(), await mint()];
    });

    after(async () => {
      await station?.dispose();
    });

    // Reservations hold free disk space: a bucket reports none (free_bytes null), so on S3 there
    // is nothing to reserve and nobody is refused for space.
    const spaceOnly = diskOnly('reservations hold free staging space; a bucket has no free space to reserve');

    test('a new upload of the same instance and job supersedes the old one and releases its space', {
      skip: spaceOnly,
    }, async () => {
      // Instance 1 declares (nearly) all the free space and sends a first chunk.
      const hog = await started(
        tokenA,
        declared('inst-one-00000001', 'docs', (await freeBytes()) - 256 * 1024 * 1024),
      );
      assert.equal((await putChunk(station.url, tokenA, hog, 0, randomBytes(1000))).status, 200);
      assert.ok(existsSync(staged(hog)), 'the first chunk is staged');

      // Another Scout is refused meanwhile, and told whose reservation is in the way.
      const big = Math.min(GIB, Math.floor((await freeBytes()) / 4));
      const refused = await initiate(station.url, tokenB, declared('inst-two-00000002', 'docs', big));
      assert.equal(refused.status, 507, JSON.stringify(refused.body));
      assert.match(refused.body.detail, /reserved by uploads of other Station tokens/);

      // Instance 1 starts a new upload of the same job: the old session and its bytes are gone.
      const next = await started(tokenA, declared('inst-one-00000001', 'docs', 1000));
      assert.notEqual(next, hog);
      assert.ok(!existsSync(staged(hog)), 'the superseded upload left nothing staged');
      const late = await putChunk(station.url, tokenA, hog, 1000, randomBytes(10));
      assert.equal(late.status, 404, JSON.stringify(late.body));
      assert.match(late.body.detail, /initiate/);
      assert.ok(existsSync(staged(next)), 'the new upload is live');

      // The space is free again for the other Scout; another job of instance 1 is not touched.
      await started(tokenB, declared('inst-two-00000002', 'docs', big));
      const otherJob = await started(tokenA, declared('inst-one-00000001', 'photos', 1000));
      assert.equal((await putChunk(station.url, tokenA, next, 0, randomBytes(10))).status, 200);
      assert.equal((await putChunk(station.url, tokenA, otherJob, 0, randomBytes(10))).status, 200);
    });

    test('empty chunks hold no space and do not keep a session from the sweep; received bytes do', {
      skip: spaceOnly,
    }, async () => {
      advance(2 * HOUR_MS); // earlier reservations lapse
      const hog = await started(
        tokenA,
        declared('inst-one-00000001', 'docs', (await freeBytes()) - 256 * 1024 * 1024),
      );
      const kept = await started(tokenA, declared('inst-one-00000001', 'music', 100));
      const big = Math.min(GIB, Math.floor((await freeBytes()) / 4));
      assert.equal(
        (await initiate(station.url, tokenB, declared('inst-two-00000002', 'mail', big))).status,
        507,
      );

      // Empty chunks every 20 minutes: accepted, but they are not bytes received.
      for (let i = 0; i < 3; i += 1) {
        advance(20 * MINUTE_MS);
        const empty = await putChunk(station.url, tokenA, hog, 0, new Uint8Array(0));
        assert.equal(empty.status, 200, JSON.stringify(empty.body));
        assert.equal(empty.body.next_offset, 0);
      }
      advance(MINUTE_MS + 1000);
      // An hour without bytes: the declared size no longer blocks anyone.
      await started(tokenB, declared('inst-two-00000002', 'mail', big));

      // Just short of a day: more empty chunks for one session, real bytes for the other.
      advance(22 * HOUR_MS);
      assert.equal((await putChunk(station.url, tokenA, hog, 0, new Uint8Array(0))).status, 200);
      assert.equal((await putChunk(station.url, tokenA, kept, 0, randomBytes(10))).status, 200);
      advance(2 * HOUR_MS);
      // Any initiation sweeps: the session fed only empty chunks is gone, the other is not.
      await started(tokenB, declared('inst-two-00000002', 'trigger', 100));
      const swept = await putChunk(station.url, tokenA, hog, 0, randomBytes(10));
      assert.equal(swept.status, 404, JSON.stringify(swept.body));
      assert.ok(!existsSync(staged(hog)));
      assert.equal((await putChunk(station.url, tokenA, kept, 10, randomBytes(10))).status, 200);
    });

    test('initiating again with the same key resumes but does not make the session younger', async () => {
      const meta = declared('inst-one-00000001', 'resume', 1000);
      const id = await started(tokenA, meta);
      assert.equal((await putChunk(station.url, tokenA, id, 0, randomBytes(100))).status, 200);
      advance(23 * HOUR_MS);
      const resumed = await initiate(station.url, tokenA, meta);
      assert.equal(resumed.status, 200);
      assert.equal(resumed.body.upload_id, id);
      assert.equal(resumed.body.next_offset, 100);
      advance(2 * HOUR_MS);
      await started(tokenB, declared('inst-two-00000002', 'trigger', 100));
      assert.equal((await putChunk(station.url, tokenA, id, 100, randomBytes(10))).status, 404);
    });

    test('a superseded upload loses its session and its staging area; other jobs keep theirs', async () => {
      const before = new Set(await stagingAreas(station));
      const old = await started(tokenA, declared('inst-one-00000001', 'sup-docs', 5000));
      assert.equal((await putChunk(station.url, tokenA, old, 0, randomBytes(1000))).status, 200);
      const other = await started(tokenA, declared('inst-one-00000001', 'sup-photos', 5000));
      assert.equal((await putChunk(station.url, tokenA, other, 0, randomBytes(10))).status, 200);
      const areas = (await stagingAreas(station)).filter((a) => !before.has(a));
      assert.equal(areas.length, 2, `a staging area for each upload: ${areas}`);

      const next = await started(tokenA, declared('inst-one-00000001', 'sup-docs', 5000));
      assert.notEqual(next, old);
      const late = await putChunk(station.url, tokenA, old, 1000, randomBytes(10));
      assert.equal(late.status, 404, JSON.stringify(late.body));
      assert.match(late.body.detail, /initiate/);
      const now = await stagingAreas(station);
      assert.equal(areas.filter((a) => now.includes(a)).length, 1, 'the superseded staging area is gone');
      assert.equal((await putChunk(station.url, tokenA, next, 0, randomBytes(10))).status, 200);
      assert.equal((await putChunk(station.url, tokenA, other, 10, randomBytes(10))).status, 200);
    });
  });
}
