// Stored snapshots, recovery, verification and reconciliation on a Station with PGlite.

import { startServer } from '../helpers/server.ts';
import { storeSuite } from './store-suite.ts';

storeSuite('station store (PGlite)', () => startServer('station'));
