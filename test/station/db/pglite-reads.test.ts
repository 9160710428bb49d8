// A Station on PGlite answers a repeated read from memory until the next write
// (src/station/db/pglite-reads.ts, issue #27 item 5): what reaches the database is counted on
// PGlite itself, under the Station's own open (src/station/db/open.ts) and its real schema.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { openStationDatabase, type StationDatabase } from '../../../src/station/db/open.ts';
import { stationTokens } from '../../../src/station/db/station-tables.ts';
import { seedPgliteCluster } from '../../helpers/pglite-template.ts';
import { ROOT } from '../../helpers/server.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'backupd-pglite-reads-'));
const reached: string[] = [];
const query = PGlite.prototype.query;
let storage: StationDatabase;

before(async () => {
  seedPgliteCluster(ROOT, dataDir);
  // Every query that reaches PGlite itself (the Station's layer sits in front of this).
  PGlite.prototype.query = function (this: PGlite, ...args: Parameters<PGlite['query']>) {
    reached.push(String(args[0]));
    return query.apply(this, args);
  } as PGlite['query'];
  storage = await openStationDatabase({ dataDir, databaseUrl: undefined });
});

after(async () => {
  PGlite.prototype.query = query;
  await storage?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const token = (hash: string) => ({
  tokenHash: hash,
  createdAt: 1,
  expiresAt: 2,
  shared: false,
  maxRegistrations: 1,
});
const tokenRow = (hash: string) =>
  storage.stationDb.select().from(stationTokens).where(eq(stationTokens.tokenHash, hash));
/** How many queries `work` sent to the database. */
async function reaching<T>(work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const before = reached.length;
  const result = await work();
  return { result, queries: reached.length - before };
}

test('a read asked again with no write since is answered without the database, and reads a write at once', async () => {
  await storage.stationDb.insert(stationTokens).values(token('a'));
  assert.equal((await reaching(() => tokenRow('a'))).queries, 1);
  const again = await reaching(() => tokenRow('a'));
  assert.equal(again.queries, 0);
  assert.deepEqual(again.result, [token('a')]);
  // Revoked (a delete): the next read goes to the database and finds nothing.
  await storage.stationDb.delete(stationTokens).where(eq(stationTokens.tokenHash, 'a'));
  const gone = await reaching(() => tokenRow('a'));
  assert.equal(gone.queries, 1);
  assert.deepEqual(gone.result, []);
});

test('a transaction or an exec makes the next read go to the database', async () => {
  await storage.stationDb.insert(stationTokens).values(token('b'));
  await tokenRow('b');
  await storage.stationDb.transaction(async (tx) => {
    await tx.update(stationTokens).set({ expiresAt: 3 }).where(eq(stationTokens.tokenHash, 'b'));
  });
  const read = await reaching(() => tokenRow('b'));
  assert.equal(read.queries, 1);
  assert.equal(read.result[0]?.expiresAt, 3);
  await tokenRow('b');
  await storage.stationDb.execute(sql`UPDATE station_tokens SET expires_at = 4 WHERE token_hash = 'b'`);
  const afterExec = await reaching(() => tokenRow('b'));
  assert.equal(afterExec.queries, 1);
  assert.equal(afterExec.result[0]?.expiresAt, 4);
});

test('a read during which a write began is not kept; a changed answer is not seen by the next reader', async () => {
  await storage.stationDb.insert(stationTokens).values(token('c'));
  const [read] = await Promise.all([
    tokenRow('c'),
    storage.stationDb.update(stationTokens).set({ expiresAt: 5 }).where(eq(stationTokens.tokenHash, 'c')),
  ]);
  assert.equal(read.length, 1);
  const next = await reaching(() => tokenRow('c'));
  assert.equal(next.queries, 1);
  assert.equal(next.result[0]?.expiresAt, 5);
  // An answer handed out is the caller's: changing it changes nothing for the next one.
  (next.result[0] as { expiresAt: number }).expiresAt = 99;
  const copy = await reaching(() => tokenRow('c'));
  assert.equal(copy.queries, 0);
  assert.equal(copy.result[0]?.expiresAt, 5);
});

test('reads whose answer changes without a write always go to the database', async () => {
  for (const text of ['SELECT now()', 'SELECT random()', 'SELECT 1 FROM station_tokens FOR UPDATE']) {
    await storage.stationDb.execute(sql.raw(text));
    const again = await reaching(() => storage.stationDb.execute(sql.raw(text)));
    assert.equal(again.queries, 1, text);
  }
});
