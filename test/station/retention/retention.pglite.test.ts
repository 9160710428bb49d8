// Calendar retention, no flush, the hourly upload limit and protection on a Station with PGlite.
import { startServer } from '../../helpers/server.ts';
import { retentionSuite } from './retention-suite.ts';

retentionSuite('retention (PGlite)', (env) => startServer('station', { env }));
