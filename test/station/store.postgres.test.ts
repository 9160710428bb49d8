// Recovery, overview, snapshot management and verification on a Station backed by PostgreSQL.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { storeSuite } from './store-suite.ts';

const LABEL = 'station store (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  storeSuite(LABEL, () => stationOn('store_suite'));
});
