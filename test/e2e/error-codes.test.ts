// Stable error codes (src/shared/protocol/error-codes.ts): every error answer of a real Station
// and a real Scout carries `detail` and a `code` from ERROR_CODES; the upload protocol's cases
// each have their own code; query parameters are checked like bodies; the Scout's restore
// request list is empty (not an error) while its token is not bound to it yet.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/shared/protocol/error-codes.ts';
import { instancePaths } from '../../src/shared/protocol/paths.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { connectScout, mintStationToken, startScout, startStation } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { archiveMeta, call, finalize, initiate, putChunk, upload } from '../helpers/uploads.ts';

let station: TestServer;
let stationAdmin: Client;
let scout: TestServer;
let scoutAdmin: Client;
let token: string;

/** An error answer: its status, a non-empty detail and a known code. */
function expectError(
  reply: { status: number; body: { detail?: unknown; code?: unknown } },
  status: number,
  code: string,
): void {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.ok(reply.body.detail, 'the answer keeps detail');
  assert.equal(reply.body.code, code, JSON.stringify(reply.body));
  assert.ok(
    Object.hasOwn(ERROR_CODES, String(reply.body.code)),
    `${reply.body.code} is listed in ERROR_CODES`,
  );
}

describe('error codes', () => {
  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    ({ server: scout, admin: scoutAdmin } = await startScout({
      fill: (scan) => buildTree(scan, { 'docs/.upload_dir': '', 'docs/a.txt': 'alpha' }),
    }));
    token = await mintStationToken(stationAdmin);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
  });

  test('defaults by status: no route, no token, a bad field', async () => {
    expectError(await stationAdmin.get('/api/no-such-route'), 404, 'not_found');
    expectError(await call(station.url, 'POST', '/backup/uploads/initiate', '', {}), 401, 'unauthorized');
    expectError(
      await call(station.url, 'POST', '/backup/uploads/initiate', 'not-a-token', {}),
      401,
      'token_rejected',
    );
    const bad = await initiate(station.url, token, archiveMeta(Buffer.from('x'), { fingerprint: 'XYZ' }));
    expectError(bad, 400, 'bad_request');
    assert.match(bad.body.detail, /fingerprint/);
  });

  test('query parameters are checked by schema: a bad or repeated offset, a bad fp', async () => {
    const data = Buffer.from('some archive bytes');
    const started = await initiate(station.url, token, archiveMeta(data));
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.upload_id;
    for (const query of ['offset=abc', 'offset=-1', 'offset=1&offset=2', '']) {
      const reply = await call(station.url, 'PUT', `/backup/uploads/${id}/chunk?${query}`, token, data);
      expectError(reply, 400, 'bad_request');
      assert.match(reply.body.detail, /offset/);
    }
    const paths = instancePaths('host-a', 'inst0000000000000001');
    const fp = await call(station.url, 'GET', paths.byFingerprint('documents', 'NOT-HEX'), token);
    expectError(fp, 400, 'bad_request');
    assert.match(fp.body.detail, /^fp: /);
  });

  test('the upload protocol: offset_mismatch, incomplete and checksum_mismatch each have their code', async () => {
    const data = Buffer.from('0123456789'.repeat(1000));
    const started = await initiate(station.url, token, archiveMeta(data));
    const id = started.body.upload_id;
    const early = await finalize(station.url, token, id);
    expectError(early, 409, 'incomplete');
    assert.equal(early.body.detail.next_offset, 0);
    assert.equal((await putChunk(station.url, token, id, 0, data.subarray(0, 4000))).status, 200);
    const ahead = await putChunk(station.url, token, id, 5000, data.subarray(5000));
    expectError(ahead, 409, 'offset_mismatch');
    assert.equal(ahead.body.detail.next_offset, 4000);
    const damaged = Buffer.from(data.subarray(4000));
    damaged[0] = 0;
    assert.equal((await putChunk(station.url, token, id, 4000, damaged)).status, 200);
    const mismatch = await finalize(station.url, token, id);
    expectError(mismatch, 409, 'checksum_mismatch');
    assert.equal(mismatch.body.detail.next_offset, 0);
  });

  test('a chunk for an upload that is already stored: 409 already_stored', async () => {
    const data = Buffer.from('stored once');
    const done = await upload(station.url, token, data);
    assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body));
    const late = await putChunk(station.url, token, done.initiate.body.upload_id, 0, data);
    expectError(late, 409, 'already_stored');
  });

  test('recovery of an instance the token is not bound to: 403 not_bound', async () => {
    const other = await mintStationToken(stationAdmin);
    const paths = instancePaths('host-a', 'inst0000000000000001');
    expectError(await call(station.url, 'GET', paths.snapshots('documents'), other), 403, 'not_bound');
  });

  test('the Scout: restore requests are an empty list until the token is bound; no Station: not_configured', async () => {
    const preview = await scoutAdmin.post('/api/recovery/preview', { relative_path: 'docs' });
    expectError(preview, 400, 'not_configured');
    await connectScout(scoutAdmin, stationAdmin, 'codes-scout');
    const requests = await scoutAdmin.get('/api/restore-requests');
    assert.equal(requests.status, 200, JSON.stringify(requests.body));
    assert.deepEqual(requests.body, []);
    // A Station that refuses the token: the Scout says so with its own code.
    await scoutAdmin.post('/api/settings', { station_url: station.url, scout_credential: 'not-a-token' });
    expectError(await scoutAdmin.get('/api/restore-requests'), 502, 'token_rejected');
    await scoutAdmin.post('/api/settings', { station_url: 'http://127.0.0.1:1', scout_credential: token });
    expectError(await scoutAdmin.get('/api/restore-requests'), 502, 'station_unreachable');
  });
});
