// A hostile Station-token holder on two Stations sharing one PostgreSQL database: the request
// limit and the drill de-duplication live in the database, so they hold across both.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { backupAbuseSuite } from './backup-abuse-suite.ts';

const LABEL = 'hostile Station token (PostgreSQL, two Stations)';
onPostgres(LABEL, (stationOn) => {
  backupAbuseSuite(LABEL, async () => [await stationOn('abuse'), await stationOn('abuse')]);
});
