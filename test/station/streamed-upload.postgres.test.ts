// Streamed uploads on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { streamedUploadSuite } from './streamed-upload-suite.ts';

const LABEL = 'streamed uploads (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  streamedUploadSuite(LABEL, (name, env) => stationOn(`streamed_upload_${name}`, { env }));
});
