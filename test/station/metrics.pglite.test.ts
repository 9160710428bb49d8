// GET /metrics on a Station with its embedded PGlite storage.

import { startServer } from '../helpers/server.ts';
import { metricsSuite } from './metrics-suite.ts';

metricsSuite('metrics (PGlite)', () => startServer('station'));
