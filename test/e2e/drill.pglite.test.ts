// Restore drills against a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { drillSuite, READY_MS } from './drill-suite.ts';

drillSuite('restore drills (PGlite)', () => startServer('station', { readyTimeoutMs: READY_MS }));
