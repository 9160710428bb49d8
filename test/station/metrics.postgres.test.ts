// GET /metrics on a Station backed by a real PostgreSQL server, and a second Station on the
// same database reporting the same snapshot gauges.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { metricsSuite } from './metrics-suite.ts';

const LABEL = 'metrics (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  metricsSuite(
    LABEL,
    () => stationOn('metrics'),
    (env) => stationOn('metrics', { env }),
  );
});
