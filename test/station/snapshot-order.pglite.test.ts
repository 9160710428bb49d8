// Snapshot order, retention_keep_within_days and the snapshot list on a Station with PGlite.

import { startServer } from '../helpers/server.ts';
import { snapshotOrderSuite } from './snapshot-order-suite.ts';

snapshotOrderSuite('snapshot order (PGlite)', () => startServer('station'));
