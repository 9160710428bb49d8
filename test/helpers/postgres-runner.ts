// Runs a Station suite against a throwaway PostgreSQL server. Without PostgreSQL installed the
// suite is skipped, except in CI (CI=true), where that is a failure.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createDatabase, type PostgresServer, postgresAvailable, startPostgres } from './postgres.ts';
import { type ServerOptions, startServer, type TestServer } from './server.ts';

/** Starts a Station on the named database (created empty on first use) of the shared server. */
export type StationOnDatabase = (database: string, options?: ServerOptions) => Promise<TestServer>;

/**
 * The `skip` for a suite that needs PostgreSQL: false where it is installed; a reason to skip
 * where it is not; in CI (CI=true) false as well, with a test `<label>: PostgreSQL is available
 * in CI` that fails, since a missing prerequisite fails there.
 */
export function postgresSkip(label: string): string | false {
  if (postgresAvailable()) return false;
  if (process.env.CI !== 'true')
    return 'PostgreSQL is not installed (apt-get install -y postgresql); skipping';
  test(`${label}: PostgreSQL is available in CI`, () => {
    assert.fail('CI=true but PostgreSQL (initdb, pg_ctl, runuser and a postgres user) is not available');
  });
  return false;
}

export function onPostgres(label: string, register: (stationOn: StationOnDatabase) => void): void {
  const skip = postgresSkip(label);
  if (skip) {
    test(label, { skip }, () => {});
    return;
  }
  let server: Promise<PostgresServer> | undefined;
  const databases = new Map<string, Promise<string>>();
  after(async () => {
    await (await server?.catch(() => undefined))?.stop();
  });
  register(async (database, options = {}) => {
    server ??= startPostgres();
    const pg = await server;
    if (!databases.has(database)) databases.set(database, createDatabase(pg.url, database));
    const url = await databases.get(database);
    return startServer('station', { ...options, env: { ...options.env, DATABASE_URL: url ?? '' } });
  });
}
