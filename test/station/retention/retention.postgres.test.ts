// Calendar retention, no flush, the hourly upload limit and protection on a Station backed by a
// real PostgreSQL server.
import { onPostgres } from '../../helpers/postgres-runner.ts';
import { retentionSuite } from './retention-suite.ts';

const LABEL = 'retention (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  retentionSuite(LABEL, (env) => stationOn('retention', { env }));
});
