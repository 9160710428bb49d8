// Upload validation and limits on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { uploadValidationSuite } from './upload-validation-suite.ts';

uploadValidationSuite('upload validation and limits (PGlite)', (_name, env) =>
  startServer('station', { env }),
);
