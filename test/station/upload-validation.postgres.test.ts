// Upload validation and limits on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { uploadValidationSuite } from './upload-validation-suite.ts';

const LABEL = 'upload validation and limits (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  uploadValidationSuite(LABEL, (name, env) => stationOn(`upload_validation_${name}`, { env }));
});
