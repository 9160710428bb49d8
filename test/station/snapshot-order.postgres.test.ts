// Snapshot order, retention_keep_within_days and the snapshot list on a Station backed by a
// real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { snapshotOrderSuite } from './snapshot-order-suite.ts';

const LABEL = 'snapshot order (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  snapshotOrderSuite(LABEL, () => stationOn('snapshot_order'));
});
