// Scout recovery downloads from the Station: latest, by fingerprint, by name, the list, HTTP
// Range, and who may download what (docs/protocol.md: Names and fields, Recovery).
// One Station for the file; each test has its own Scout, instance and job names.
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { assertError } from '../../helpers/assertions.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { hex64, type StartStation, type Stored, useStoreStation } from './store-kit.ts';

export function snapshotDownloadsSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStoreStation(start);
    const { mintStation, store, get, bearer, session, rawGet, assertSnapshotDownload } = ctx;

    describe('Scout recovery downloads', () => {
      const at = { scout: 'rec-scout', instance: 'rec-inst-0001', job: 'documents' };
      const base = `/backup/recovery/${at.scout}/${at.instance}/${at.job}`;
      const fpA = hex64();
      const fpB = hex64();
      let token: string;
      let otherToken: string;
      let first: Stored; // fingerprint A
      let second: Stored; // fingerprint B
      let third: Stored; // fingerprint A again (a forced backup), the newest

      before(async () => {
        token = await mintStation();
        otherToken = await mintStation();
        first = await store(token, at, { fingerprint: fpA, size: 3000 });
        second = await store(token, at, { fingerprint: fpB, size: 3500 });
        third = await store(token, at, { fingerprint: fpA, size: 4000 });
        // The other token belongs to another instance of the same Scout.
        await store(otherToken, { ...at, instance: 'rec-inst-0002' });
      });

      test('latest returns the newest snapshot: exact bytes, octet-stream, filename header, length', async () => {
        assertSnapshotDownload(await get(`${base}/latest`, bearer(token)), third);
      });

      test('by-fingerprint returns the newest match for the 8- and 64-character forms', async () => {
        assertSnapshotDownload(await get(`${base}/by-fingerprint?fp=${fpA}`, bearer(token)), third);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${fpA.slice(0, 8)}`, bearer(token)),
          third,
        );
        assertSnapshotDownload(await get(`${base}/by-fingerprint?fp=${fpB}`, bearer(token)), second);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${fpB.slice(0, 8)}`, bearer(token)),
          second,
        );
      });

      test('by-fingerprint rejects a malformed fp with 400', async () => {
        for (const fp of ['XYZ', fpA.slice(0, 7), fpA.slice(0, 9), fpA.toUpperCase(), `${fpA}0`, '']) {
          const reply = await get(`${base}/by-fingerprint?fp=${encodeURIComponent(fp)}`, bearer(token));
          assertError(reply, 400, /fp|fingerprint/i);
        }
        assertError(await get(`${base}/by-fingerprint`, bearer(token)), 400, /fp|fingerprint/i);
      });

      test('by-fingerprint without a match is 404', async () => {
        const none = hex64();
        assertError(await get(`${base}/by-fingerprint?fp=${none}`, bearer(token)), 404);
        assertError(await get(`${base}/by-fingerprint?fp=${none.slice(0, 8)}`, bearer(token)), 404);
      });

      test('archive/{filename} returns that exact snapshot; an unknown name is 404', async () => {
        assertSnapshotDownload(await get(`${base}/archive/${first.name}`, bearer(token)), first);
        assertSnapshotDownload(await get(`${base}/archive/${second.name}`, bearer(token)), second);
        const unknown = `${at.job}__2020-01-01T00-00-00Z__deadbeef.tar.zst`;
        assertError(await get(`${base}/archive/${unknown}`, bearer(token)), 404);
      });

      test('a job without snapshots has no latest (404)', async () => {
        assertError(
          await get(`/backup/recovery/${at.scout}/${at.instance}/no-such-job/latest`, bearer(token)),
          404,
        );
      });

      test('a token bound to another instance is refused with 403', async () => {
        for (const path of [
          `${base}/latest`,
          `${base}/by-fingerprint?fp=${fpA}`,
          `${base}/archive/${first.name}`,
        ]) {
          const reply = await get(path, bearer(otherToken));
          assertError(reply, 403);
          assert.equal(reply.headers.get('x-relay-snapshot-filename'), null);
        }
      });

      test('an unbound fresh token is refused with 403', async () => {
        const fresh = await mintStation();
        assertError(await get(`${base}/latest`, bearer(fresh)), 403);
        assertError(await get(`${base}/archive/${first.name}`, bearer(fresh)), 403);
      });

      test('no token, an invalid token or an operator session is 401', async () => {
        assertError(await get(`${base}/latest`), 401);
        assertError(await get(`${base}/latest`, bearer('not-a-station-token')), 401);
        assertError(await get(`${base}/archive/${first.name}`, session()), 401);
        // An automation token is not a Station token either.
        assertError(await get(`${base}/latest`, bearer(ctx.restoreToken)), 401);
      });

      test('path components breaking the namespace rule are 400 and never reach the disk', async () => {
        // A decoy where `..%2F` traversal out of the job folder would land.
        const decoy = join(ctx.station.dataDir, 'decoy.tar.zst');
        writeFileSync(decoy, 'decoy bytes that must never be served');
        const dots = '..%2F..%2F..%2F..%2Fdecoy.tar.zst';
        const cases: [string, RegExp][] = [
          [`/backup/recovery/.x/${at.instance}/${at.job}/latest`, /scout_id/],
          [`/backup/recovery/${at.scout}/.x/${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/${at.scout}/${at.instance}/.x/latest`, /job_name/],
          [`/backup/recovery/a%2Fb/${at.instance}/${at.job}/latest`, /scout_id/],
          [`/backup/recovery/${at.scout}/a%2Fb/${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/${at.scout}/${at.instance}/..%2F..%2F${at.job}/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/${at.job}%2F..%2F${at.job}/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/.x/by-fingerprint?fp=${fpA}`, /job_name/],
          [`${base}/archive/${dots}`, /filename/],
          [`${base}/archive/..%2F${at.job}%2F${first.name}`, /filename/],
          [`${base}/archive/.hidden.tar.zst`, /filename/],
          [`${base}/archive/not-a-snapshot.txt`, /filename/],
        ];
        for (const [path, field] of cases) {
          const reply = await get(path, bearer(token));
          assertError(reply, 400, field);
          assert.ok(!reply.bytes.toString('utf8').includes('decoy bytes'), `${path} served the decoy`);
        }
        assert.ok(existsSync(decoy));
        rmSync(decoy);
      });

      test('a literal ".." path component is 400 naming the problem', async () => {
        // fetch() resolves dot segments itself, so these go out byte for byte.
        const cases: [string, RegExp][] = [
          [`/backup/recovery/${at.scout}/${at.instance}/../latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/%2E%2E/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/../${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/../${at.instance}/${at.job}/latest`, /scout_id/],
          [`${base}/archive/..`, /filename/],
        ];
        const problems: string[] = [];
        for (const [path, field] of cases) {
          const reply = await rawGet(path, bearer(token));
          assert.notEqual(reply.status, 200, `${path} must not serve a snapshot`);
          assert.equal(reply.headers.get('x-relay-snapshot-filename'), null, path);
          const detail = JSON.stringify(reply.json?.detail ?? '');
          // Dot segments are refused before routing, so the detail names the segment, not the field.
          if (reply.status !== 400 || !(field.test(detail) || /segments/.test(detail))) {
            problems.push(
              `GET ${path}: expected 400 naming ${field} or the segment, got ${reply.status} ${detail}`,
            );
          }
        }
        assert.deepEqual(problems, []);
      });

      test('Range: bytes=10-99 is 206 with Content-Range and exactly those bytes', async () => {
        const size = third.data.length;
        const reply = await get(`${base}/latest`, bearer(token, { range: 'bytes=10-99' }));
        assert.equal(reply.status, 206);
        assert.equal(reply.headers.get('content-range'), `bytes 10-99/${size}`);
        assert.equal(reply.headers.get('content-length'), '90');
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('x-relay-snapshot-filename'), third.name);
        assert.ok(reply.bytes.equals(third.data.subarray(10, 100)));
      });

      test('Range: an open range bytes=100- and a suffix bytes=-50', async () => {
        const size = third.data.length;
        const open = await get(`${base}/latest`, bearer(token, { range: 'bytes=100-' }));
        assert.equal(open.status, 206);
        assert.equal(open.headers.get('content-range'), `bytes 100-${size - 1}/${size}`);
        assert.equal(open.headers.get('content-length'), String(size - 100));
        assert.ok(open.bytes.equals(third.data.subarray(100)));

        const suffix = await get(`${base}/latest`, bearer(token, { range: 'bytes=-50' }));
        assert.equal(suffix.status, 206);
        assert.equal(suffix.headers.get('content-range'), `bytes ${size - 50}-${size - 1}/${size}`);
        assert.equal(suffix.headers.get('content-length'), '50');
        assert.ok(suffix.bytes.equals(third.data.subarray(size - 50)));

        // The exact archive route takes ranges too.
        const exact = await get(`${base}/archive/${first.name}`, bearer(token, { range: 'bytes=0-0' }));
        assert.equal(exact.status, 206);
        assert.equal(exact.headers.get('content-range'), `bytes 0-0/${first.data.length}`);
        assert.ok(exact.bytes.equals(first.data.subarray(0, 1)));
      });

      test('Range: an unsatisfiable range is 416 with Content-Range bytes */SIZE and code range_not_satisfiable', async () => {
        const size = third.data.length;
        for (const range of [`bytes=${size}-`, `bytes=${size}-${size + 10}`, `bytes=${size + 1000}-`]) {
          const reply = await get(`${base}/latest`, bearer(token, { range }));
          assert.equal(reply.status, 416, `${range}: ${reply.bytes.toString('utf8', 0, 200)}`);
          assert.equal(reply.headers.get('content-range'), `bytes */${size}`, range);
          // Through the one error handler: {detail, code} like every other refusal.
          assert.deepEqual(JSON.parse(reply.bytes.toString('utf8')), {
            detail: `range not satisfiable for ${size} bytes`,
            code: 'range_not_satisfiable',
          });
          assert.ok(!reply.bytes.equals(third.data), 'no snapshot bytes with a 416');
        }
      });

      test('an interrupted download resumed by ranges reassembles the identical file', async () => {
        const size = third.data.length;
        // Start a full download and give up after the first bytes arrive.
        const res = await fetch(`${ctx.station.url}${base}/latest`, { headers: bearer(token) });
        assert.equal(res.status, 200);
        const reader = res.body?.getReader();
        assert.ok(reader);
        const firstChunk = await reader.read();
        await reader.cancel();
        const parts: Buffer[] = [Buffer.from(firstChunk.value ?? new Uint8Array()).subarray(0, 777)];
        let have = parts[0]?.length ?? 0;
        // Then fetch the rest in small pieces, each starting where the last ended.
        while (have < size) {
          const end = Math.min(have + 999, size - 1);
          const piece = await get(`${base}/latest`, bearer(token, { range: `bytes=${have}-${end}` }));
          assert.equal(piece.status, 206);
          assert.equal(piece.headers.get('content-range'), `bytes ${have}-${end}/${size}`);
          assert.equal(piece.headers.get('x-relay-snapshot-filename'), third.name);
          parts.push(piece.bytes);
          have += piece.bytes.length;
        }
        const whole = Buffer.concat(parts);
        assert.equal(whole.length, size);
        assert.equal(sha256(whole), third.meta.archive_sha256);
        assert.ok(whole.equals(third.data));
      });
    });
  });
}
