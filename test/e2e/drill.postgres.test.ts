// Restore drills against a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { drillSuite, READY_MS } from './drill-suite.ts';

const LABEL = 'restore drills (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  drillSuite(LABEL, () => stationOn('drills', { readyTimeoutMs: READY_MS }));
});
