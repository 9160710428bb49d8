// The sign-in limiter on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

const LABEL = 'station (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  signInLimitSuite(LABEL, (opts) => stationOn('sign_in_limits', opts));
});
