// Disk space, crash and abandoned uploads on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { uploadRecoverySuite } from './upload-recovery-suite.ts';

uploadRecoverySuite('disk space, crash and abandoned uploads (PGlite)', (_name, env) =>
  startServer('station', { env }),
);
