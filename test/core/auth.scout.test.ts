// Sign-in, accounts and automation tokens on a Scout (SQLite through node:sqlite).

import { startServer } from '../helpers/server.ts';
import { authSuite } from './auth-suite.ts';

authSuite(
  'scout (SQLite)',
  (opts) => startServer('scout', { dataDir: opts?.dataDir }),
  'service_scout_session',
);
