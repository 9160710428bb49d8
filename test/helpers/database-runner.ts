// Runs Station suites on one kind of database, so a `*.pglite.test.ts` and a
// `*.postgres.test.ts` file can register the same suites with one line each.
import { onPostgres, type StationOnDatabase } from './postgres-runner.ts';
import { startServer } from './server.ts';

export type Database = 'pglite' | 'postgres';

const SHOWN: Record<Database, string> = { pglite: 'PGlite', postgres: 'PostgreSQL' };

/** What a suite table registers: its suites, each on a Station of `stationOn`. */
export type SuiteTable = (
  stationOn: StationOnDatabase,
  /** `what (PGlite)` or `what (PostgreSQL)`: a suite's label on this database. */
  on: (what: string) => string,
  database: Database,
) => void;

/**
 * Registers `suites` on `database`. PGlite: every Station has its own embedded database (the
 * database name is ignored). PostgreSQL: one throwaway server for the whole file, each name
 * its own database, so Stations started with the same name share one; without PostgreSQL
 * the file is skipped, except in CI, where that fails.
 */
export function onDatabase(database: Database, area: string, suites: SuiteTable): void {
  const on = (what: string) => `${what} (${SHOWN[database]})`;
  if (database === 'pglite') {
    suites((_name, options) => startServer('station', options), on, database);
    return;
  }
  onPostgres(on(area), (stationOn) => suites(stationOn, on, database));
}
