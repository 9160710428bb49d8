// Unusual snapshots and retention on a Station backed by a real PostgreSQL server.
import { onPostgres } from '../helpers/postgres-runner.ts';
import { uploadRulesSuite } from './upload-rules-suite.ts';

const LABEL = 'unusual snapshots and retention (PostgreSQL)';
onPostgres(LABEL, (stationOn) => {
  uploadRulesSuite(LABEL, (name, env) => stationOn(`upload_rules_${name}`, { env }));
});
