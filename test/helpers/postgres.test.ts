import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { test } from 'node:test';
import postgres from 'postgres';
import { createDatabase, postgresAvailable, startPostgres } from './postgres.ts';

// In CI a missing PostgreSQL must fail the run (startPostgres throws); elsewhere we skip.
const skip =
  process.env.CI !== 'true' && !postgresAvailable()
    ? 'PostgreSQL is not installed (apt-get install -y postgresql); skipping'
    : false;

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('startPostgres runs a throwaway server that stop() removes', { skip, timeout: 60_000 }, async () => {
  const started = performance.now();
  const server = await startPostgres();
  let stopped = false;
  try {
    assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    assert.ok(existsSync(server.dir), 'data folder exists while running');
    assert.equal(await accepts(server.port), true, 'port accepts connections while running');

    const dbUrl = await createDatabase(server.url, 'helper_test');
    assert.equal(dbUrl, `postgres://postgres@127.0.0.1:${server.port}/helper_test`);

    const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`select 1 as one, current_database() as db`;
      assert.equal(row?.one, 1);
      assert.equal(row?.db, 'helper_test');
      await sql`create table t (x int)`;
    } finally {
      await sql.end();
    }

    // Creating it again gives a fresh, empty database.
    const again = postgres(await createDatabase(server.url, 'helper_test'), { max: 1 });
    try {
      const tables = await again`select count(*)::int as n from pg_tables where schemaname = 'public'`;
      assert.equal(tables[0]?.n, 0);
    } finally {
      await again.end();
    }

    const startStop = performance.now();
    await server.stop();
    stopped = true;
    const now = performance.now();
    console.log(
      `postgres start..stop: ${Math.round(now - started)} ms total (stop ${Math.round(now - startStop)} ms)`,
    );
  } finally {
    if (!stopped) await server.stop();
  }

  assert.equal(existsSync(server.dir), false, 'data folder removed after stop()');
  assert.equal(await accepts(server.port), false, 'port refuses connections after stop()');
  await server.stop(); // idempotent
});
