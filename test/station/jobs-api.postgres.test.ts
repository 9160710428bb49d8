// GET /api/jobs on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { jobsApiSuite } from './jobs-api-suite.ts';

const LABEL = 'jobs API (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  jobsApiSuite(LABEL, () => stationOn('jobs_api'));
});
