// Sign-in, accounts, automation tokens and the sign-in limiter on a Scout (SQLite through
// node:sqlite).
import { startServer } from '../helpers/server.ts';
import { authSuite } from './auth-suite.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

authSuite(
  'scout (SQLite)',
  (opts) => startServer('scout', { dataDir: opts?.dataDir }),
  'service_scout_session',
);
signInLimitSuite('scout sign-in limiter (SQLite)', (opts) => startServer('scout', opts));
