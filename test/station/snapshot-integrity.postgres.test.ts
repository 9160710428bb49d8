// Verification and start-up reconciliation on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { snapshotIntegritySuite } from './snapshot-integrity-suite.ts';

const LABEL = 'verification and start-up reconciliation (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  snapshotIntegritySuite(LABEL, () => stationOn('snapshot_integrity'));
});
