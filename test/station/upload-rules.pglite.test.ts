// Unusual snapshots and retention on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { uploadRulesSuite } from './upload-rules-suite.ts';

uploadRulesSuite('unusual snapshots and retention (PGlite)', (_name, env) => startServer('station', { env }));
