// Disk space, crash and abandoned uploads on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { uploadRecoverySuite } from './upload-recovery-suite.ts';

const LABEL = 'disk space, crash and abandoned uploads (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  uploadRecoverySuite(LABEL, (name, env) => stationOn(`upload_recovery_${name}`, { env }));
});
