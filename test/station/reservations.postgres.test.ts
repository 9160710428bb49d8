// Staging reservations on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { reservationsSuite } from './reservations-suite.ts';

const LABEL = 'staging reservations (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  reservationsSuite(LABEL, (options) => stationOn('reservations', options));
});
