// Overview, snapshot and instance management on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { snapshotManagementSuite } from './snapshot-management-suite.ts';

const LABEL = 'overview, snapshot and instance management (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  snapshotManagementSuite(LABEL, () => stationOn('snapshot_management'));
});
