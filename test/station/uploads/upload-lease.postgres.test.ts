// The upload lease on two Stations sharing one PostgreSQL database and one staging folder
// (issue #23 item 6). The lease runs on the database's clock: a Station whose own clock is
// 120 s ahead does not take a lease another Station holds. And a holder whose lease lapsed
// and was taken (it stood still past the lease) writes no more bytes and saves nothing.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { uploadPaths } from '../../../src/shared/protocol/paths.ts';
import { LEASE_MS } from '../../../src/station/uploads/upload-lease.ts';
import { adminClient } from '../../helpers/http.ts';
import { createDatabase, type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { postgresSkip } from '../../helpers/postgres-runner.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, call, finalize, initiate, putChunk } from '../../helpers/uploads.ts';

const LABEL = 'the upload lease on two Stations (PostgreSQL)';
const MIB = 1024 * 1024;

interface Reply {
  status: number;
  body: { next_offset?: number; detail?: { status?: string; next_offset?: number }; code?: string };
}

/** A chunk PUT whose body the test sends piece by piece. */
function openChunk(server: TestServer, token: string, uploadId: string, offset: number, length: number) {
  const req = request(`${server.url}${uploadPaths.chunk(uploadId, offset)}`, {
    method: 'PUT',
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/octet-stream',
      'content-length': length,
    },
  });
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  return { send: (bytes: Uint8Array) => req.write(bytes), end: (bytes: Uint8Array) => req.end(bytes), reply };
}

describe(LABEL, { skip: postgresSkip(LABEL) }, () => {
  let pg: PostgresServer;
  let sql: ReturnType<typeof postgres>;
  let a: TestServer;
  let b: TestServer;
  let token: string;
  let shared: string;
  const instance = randomBytes(10).toString('hex');
  const staged = (uploadId: string) => join(shared, 'staging', `${uploadId}.part`);
  const stagedSize = (uploadId: string) => statSync(staged(uploadId), { throwIfNoEntry: false })?.size ?? 0;

  async function untilStaged(uploadId: string, size: number): Promise<void> {
    for (let i = 0; i < 2400 && stagedSize(uploadId) < size; i += 1)
      await new Promise((r) => setTimeout(r, 25));
    assert.equal(stagedSize(uploadId), size, 'the first part of the chunk reached the staged file');
  }

  /** Whether `reply` settles within `ms` (a request that must still be waiting). */
  const settlesWithin = (reply: Promise<unknown>, ms: number) =>
    Promise.race([reply.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);

  async function started(data: Uint8Array): Promise<string> {
    const reply = await initiate(a.url, token, archiveMeta(data, { scout_instance_id: instance }));
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.upload_id;
  }

  before(async () => {
    pg = await startPostgres();
    const databaseUrl = await createDatabase(pg.url, 'upload_lease');
    sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    shared = mkdtempSync(join(tmpdir(), 'backupd-shared-disk-'));
    // One disk for both (as a shared mount), so each sees the bytes the other staged.
    const env = {
      DATABASE_URL: databaseUrl,
      STAGING_DIR: join(shared, 'staging'),
      BACKUP_ROOT: join(shared, 'snapshots'),
    };
    a = await startServer('station', { env });
    b = await startServer('station', { env });
    b.advanceClock(120_000);
    token = await mintStationToken(await adminClient(a.url));
  });

  after(async () => {
    await a?.dispose();
    await b?.dispose();
    await sql?.end();
    await pg?.stop();
    if (shared) rmSync(shared, { recursive: true, force: true });
  });

  test('a Station whose clock is 120 s ahead waits while another writes a chunk', async () => {
    const data = randomBytes(3 * MIB);
    const uploadId = await started(data);
    const first = openChunk(a, token, uploadId, 0, 2 * MIB);
    first.send(data.subarray(0, MIB));
    await untilStaged(uploadId, MIB);
    const intruder = call(b.url, 'PUT', uploadPaths.chunk(uploadId, MIB), token, randomBytes(MIB));
    assert.equal(await settlesWithin(intruder, 1500), false, 'B entered while A held the lease');
    assert.equal(stagedSize(uploadId), MIB, 'B wrote nothing');
    first.end(data.subarray(MIB, 2 * MIB));
    const mine = await first.reply;
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.next_offset, 2 * MIB);
    const theirs = await intruder;
    assert.equal(theirs.status, 409, 'B entered after A, and its offset was stale');
    assert.equal(theirs.body.detail.status, 'offset_mismatch');
    assert.equal(theirs.body.detail.next_offset, 2 * MIB);
    assert.ok(readFileSync(staged(uploadId)).equals(data.subarray(0, 2 * MIB)), 'only A’s bytes are staged');
    assert.equal((await putChunk(b.url, token, uploadId, 2 * MIB, data.subarray(2 * MIB))).status, 200);
    const done = await finalize(b.url, token, uploadId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.status, 'stored', 'the checksum matched');
  });

  test('a holder whose lease lapsed and was taken writes no more bytes and saves nothing', async () => {
    const data = randomBytes(2 * MIB);
    const uploadId = await started(data);
    const stale = openChunk(a, token, uploadId, 0, 2 * MIB);
    stale.send(data.subarray(0, MIB));
    await untilStaged(uploadId, MIB);
    // A stands still past its lease: its own clock moves on, and on the database's clock the
    // lease has lapsed.
    a.advanceClock(LEASE_MS + 1000);
    await sql`UPDATE leases SET until = 0 WHERE name = ${`upload:${uploadId}`}`;
    const other = randomBytes(MIB);
    const taken = await call(b.url, 'PUT', uploadPaths.chunk(uploadId, MIB), token, other);
    assert.equal(taken.status, 200, `B takes the lapsed lease: ${JSON.stringify(taken.body)}`);
    assert.equal(taken.body.next_offset, 2 * MIB);
    stale.end(data.subarray(MIB));
    const refused = await stale.reply;
    assert.equal(refused.status, 409, `A's write is refused: ${JSON.stringify(refused.body)}`);
    assert.equal(refused.body.detail?.status, 'offset_mismatch');
    assert.equal(refused.body.detail?.next_offset, 2 * MIB);
    assert.ok(
      readFileSync(staged(uploadId)).equals(Buffer.concat([data.subarray(0, MIB), other])),
      'A wrote nothing after its lease was taken',
    );
  });
});
