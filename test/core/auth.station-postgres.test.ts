// Sign-in, accounts and automation tokens on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { authSuite } from './auth-suite.ts';

const LABEL = 'station (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  authSuite(LABEL, (opts) => stationOn('auth_suite', { dataDir: opts?.dataDir }), 'service_session');
});
