// Upload flow on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { uploadFlowSuite } from './upload-flow-suite.ts';

const LABEL = 'upload flow (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  uploadFlowSuite(LABEL, (name, env) => stationOn(`upload_flow_${name}`, { env }));
});
