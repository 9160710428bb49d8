// The snapshots suites (snapshot-suites.ts) on each Station with its embedded PGlite.
import { snapshotSuites } from './snapshot-suites.ts';

snapshotSuites('pglite');
