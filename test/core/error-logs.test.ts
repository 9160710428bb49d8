// Errors are logged without the values a failed query carried, /health says nothing of the
// database's own error text, and each answer is logged at a level that fits: refusals at
// info/warn as one line without a stack, real failures at error with their stack.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { serializeError } from '../../src/core/log-errors.ts';
import { adminClient, Client } from '../helpers/http.ts';
import { logLine } from '../helpers/log-lines.ts';
import {
  createDatabase,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('the error serializer', () => {
  let pg: PGlite;

  before(async () => {
    pg = new PGlite();
    await pg.exec('CREATE TABLE t (v varchar(8) UNIQUE)');
  });

  after(async () => {
    await pg?.close();
  });

  test('a DrizzleQueryError loses its params, in the message, the stack and the fields', async () => {
    const db = drizzle(pg);
    const value = secret('TooLongSecret');
    const error = await db.execute(sql`INSERT INTO t (v) VALUES (${value})`).then(
      () => assert.fail('the insert should fail'),
      (e: unknown) => e as Error,
    );
    assert.equal(error.constructor.name, 'DrizzleQueryError');
    assert.ok(
      JSON.stringify(error, Object.getOwnPropertyNames(error)).includes(value),
      'the raw error has it',
    );
    const logged = JSON.stringify(serializeError(error));
    assert.equal(logged.includes(value), false, logged);
    assert.match(logged, /Failed query: INSERT INTO t/);
    assert.match(logged, /value too long for type character varying\(8\)/, 'the cause is kept');
    assert.match(logged, /"stack":"DrizzleQueryError|"stack":"Error: Failed query/);
  });

  test('a database error\'s detail ("Key (v)=(…) already exists") is dropped', async () => {
    const db = drizzle(pg);
    const value = secret('dup').slice(0, 8);
    await db.execute(sql`INSERT INTO t (v) VALUES (${value})`);
    const error = await db.execute(sql`INSERT INTO t (v) VALUES (${value})`).then(
      () => assert.fail('the insert should fail'),
      (e: unknown) => e as Error,
    );
    assert.match(String((error.cause as { detail?: string }).detail), /already exists/);
    const logged = JSON.stringify(serializeError(error));
    assert.equal(logged.includes(value), false, logged);
    assert.match(logged, /duplicate key value violates unique constraint/);
  });

  test('other errors keep message, stack and fields', () => {
    const error = Object.assign(new Error('disk on fire', { cause: new Error('ENOSPC') }), { code: 'EIO' });
    const logged = serializeError(error) as Record<string, unknown>;
    assert.equal(logged.type, 'Error');
    assert.match(String(logged.message), /disk on fire: ENOSPC/);
    assert.match(String(logged.stack), /disk on fire/);
    assert.equal(logged.code, 'EIO');
  });

  test('host errors (a fetch timeout as DOMException, alone or as a cause) serialise', () => {
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const alone = serializeError(timeout) as Record<string, unknown>;
    assert.equal(alone.type, 'DOMException');
    assert.match(String(alone.stack), /TimeoutError: The operation was aborted/);
    const wrapped = serializeError(new TypeError('fetch failed', { cause: timeout })) as Record<
      string,
      unknown
    >;
    assert.match(String(wrapped.message), /fetch failed: The operation was aborted due to timeout/);
  });
});

describe('Scout: a failed settings write', () => {
  let scout: TestServer;
  let admin: Client;

  before(async () => {
    scout = await startServer('scout');
    admin = await adminClient(scout.url);
  });

  after(async () => {
    await scout?.dispose();
  });

  test('logs the failure at error with its stack, but never the scout_credential it carried', async () => {
    const credential = secret('bkd_st_LockedOut');
    // Another process holds the write lock: the Scout waits out its busy timeout (5 s) and fails.
    const holder = new DatabaseSync(join(scout.dataDir, 'scout.db'));
    holder.exec('BEGIN EXCLUSIVE');
    let reply: Awaited<ReturnType<Client['post']>>;
    try {
      reply = await admin.post('/api/settings', {
        scout_credential: credential,
        station_url: 'http://127.0.0.1:9',
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.equal(reply.status, 500, reply.text);
    assert.equal(reply.text.includes(credential), false, reply.text);
    const line = await logLine(scout, (l) => l.msg === 'unhandled error');
    assert.equal(line.level, 50, 'a real failure is logged at error');
    const err = line.err as Record<string, unknown>;
    assert.match(String(err.message), /database is locked/);
    assert.match(String(err.stack), /\n\s+at /, 'with its stack');
    assert.equal(scout.output().includes(credential), false, 'the credential is in the log');
  });

  test('refusals are logged at info (4xx) and warn (502) without a stack', async () => {
    const wrong = await new Client(scout.url).login('admin', 'not the password');
    assert.equal(wrong.status, 401, wrong.text);
    const refused = await logLine(scout, (l) => l.status === 401 && l.msg !== 'request');
    assert.equal(refused.level, 30, JSON.stringify(refused));
    assert.equal('err' in refused || 'stack' in refused, false, JSON.stringify(refused));

    // station_url points at a closed port: listing restore requests is a 502.
    const saved = await admin.post('/api/settings', {
      scout_credential: secret('bkd_st_Token'),
      station_url: 'http://127.0.0.1:9',
    });
    assert.equal(saved.status, 200, saved.text);
    const unreachable = await admin.get('/api/restore-requests');
    assert.equal(unreachable.status, 502, unreachable.text);
    const warned = await logLine(scout, (l) => l.status === 502 && l.msg !== 'request');
    assert.equal(warned.level, 40, JSON.stringify(warned));
    assert.equal('err' in warned || 'stack' in warned, false, JSON.stringify(warned));
  });
});

describe('Station /health with PostgreSQL gone', () => {
  let pg: PostgresServer | undefined;
  let station: TestServer | undefined;

  after(async () => {
    await station?.dispose();
    await pg?.stop();
  });

  // Without PostgreSQL this is skipped, except in CI (CI=true), where it is a failure.
  const skip = !postgresAvailable() && process.env.CI !== 'true' && 'PostgreSQL is not installed';
  test('says the database is unreachable, not why; the log has the cause', { skip }, async () => {
    const postgres = await startPostgres();
    pg = postgres;
    const server = await startServer('station', {
      env: { DATABASE_URL: await createDatabase(postgres.url, 'health_gone') },
    });
    station = server;
    const healthy = await new Client(server.url).get('/health');
    assert.equal(healthy.status, 200, healthy.text);
    await postgres.stop();
    for (const path of ['/health', '/health/ready']) {
      const reply = await new Client(server.url).get(path);
      assert.equal(reply.status, 503, reply.text);
      assert.match(reply.body.detail, /database unreachable/);
      for (const leak of ['ECONNREFUSED', '127.0.0.1', String(postgres.port), 'connect']) {
        assert.equal(reply.text.includes(leak), false, `${path} shows "${leak}": ${reply.text}`);
      }
    }
    const line = await logLine(server, (l) => l.msg === 'health check: the database is unreachable');
    assert.equal(line.level, 50);
    assert.match(JSON.stringify(line.err), /ECONNREFUSED|connect|terminat/i);
  });
});
