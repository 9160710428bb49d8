// Sign-in, accounts, automation tokens and the sign-in limiter on a Station backed by a real
// PostgreSQL server (one server for the file, a database per suite).
import { onPostgres } from '../helpers/postgres-runner.ts';
import { authSuite } from './auth-suite.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

onPostgres('station (PostgreSQL)', (stationOn) => {
  authSuite(
    'station (PostgreSQL)',
    (opts) => stationOn('auth_suite', { dataDir: opts?.dataDir }),
    'service_session',
  );
  signInLimitSuite('station sign-in limiter (PostgreSQL)', (opts) => stationOn('sign_in_limits', opts));
});
