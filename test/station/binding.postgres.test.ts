// Instance binding and recovery tokens on two Stations sharing one PostgreSQL database (as
// behind a load balancer): the reservation must hold across processes, so it lives in the
// database. The second Station has a data dir of its own and finds the signing key in the
// database, so each accepts the other's Station tokens.

import { onPostgres } from '../helpers/postgres-runner.ts';
import { bindingSuite } from './binding-suite.ts';

const LABEL = 'binding (PostgreSQL, two Stations)';
onPostgres(LABEL, (stationOn) => {
  bindingSuite(LABEL, async () => [await stationOn('binding'), await stationOn('binding')]);
});
