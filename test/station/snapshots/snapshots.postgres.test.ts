// The snapshots suites (snapshot-suites.ts) on one throwaway PostgreSQL server, each suite its own database.
import { snapshotSuites } from './snapshot-suites.ts';

snapshotSuites('postgres');
