// Upload flow on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { uploadFlowSuite } from './upload-flow-suite.ts';

uploadFlowSuite('upload flow (PGlite)', (_name, env) => startServer('station', { env }));
