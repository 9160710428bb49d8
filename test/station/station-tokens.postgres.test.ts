// Station tokens and binding on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { stationTokensSuite } from './station-tokens-suite.ts';

const LABEL = 'Station tokens and binding (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  stationTokensSuite(LABEL, (name, env) => stationOn(`station_tokens_${name}`, { env }));
});
