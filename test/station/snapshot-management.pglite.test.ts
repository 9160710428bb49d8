// Overview, snapshot and instance management on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { snapshotManagementSuite } from './snapshot-management-suite.ts';

snapshotManagementSuite('overview, snapshot and instance management (PGlite)', () => startServer('station'));
