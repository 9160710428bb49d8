// Stored snapshots, recovery, verification and reconciliation on a Station backed by a real
// PostgreSQL server. Without PostgreSQL installed the file is skipped, except in CI, where
// that is a failure.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  createDatabase,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../helpers/postgres.ts';
import { startServer } from '../helpers/server.ts';
import { storeSuite } from './store-suite.ts';

const LABEL = 'station store (PostgreSQL)';
const inCi = process.env.CI === 'true';

if (!postgresAvailable() && !inCi) {
  test(LABEL, { skip: 'PostgreSQL is not installed (apt-get install -y postgresql); skipping' }, () => {});
} else {
  let postgres: PostgresServer | undefined;

  after(async () => {
    await postgres?.stop();
  });

  if (!postgresAvailable()) {
    test(`${LABEL}: PostgreSQL is available in CI`, () => {
      assert.fail('CI=true but PostgreSQL (initdb, pg_ctl, runuser and a postgres user) is not available');
    });
  }

  storeSuite(LABEL, async () => {
    postgres ??= await startPostgres();
    const databaseUrl = await createDatabase(postgres.url, 'store_suite');
    return startServer('station', { env: { DATABASE_URL: databaseUrl } });
  });
}
