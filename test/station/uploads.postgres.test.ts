// Station tokens and the upload protocol on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { uploadsSuite } from './uploads-suite.ts';

const LABEL = 'uploads (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  // Both Stations of the suite start at once: one PostgreSQL server, one database each.
  uploadsSuite(LABEL, (name, env) => stationOn(`uploads_${name}`, { env }));
});
