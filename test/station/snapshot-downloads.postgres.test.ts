// Scout recovery downloads on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { snapshotDownloadsSuite } from './snapshot-downloads-suite.ts';

const LABEL = 'Scout recovery downloads (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  snapshotDownloadsSuite(LABEL, () => stationOn('snapshot_downloads'));
});
