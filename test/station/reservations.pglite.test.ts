// Staging reservations on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { reservationsSuite } from './reservations-suite.ts';

reservationsSuite('staging reservations (PGlite)', (options) => startServer('station', options));
