// The sign-in limiter on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

signInLimitSuite('station (PGlite)', (opts) => startServer('station', opts));
