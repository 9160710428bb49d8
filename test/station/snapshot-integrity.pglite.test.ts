// Verification and start-up reconciliation on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { snapshotIntegritySuite } from './snapshot-integrity-suite.ts';

snapshotIntegritySuite('verification and start-up reconciliation (PGlite)', () => startServer('station'));
