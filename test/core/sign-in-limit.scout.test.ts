// The sign-in limiter on a Scout (SQLite through node:sqlite).
import { startServer } from '../helpers/server.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

signInLimitSuite('scout (SQLite)', (opts) => startServer('scout', opts));
