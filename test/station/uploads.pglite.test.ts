// Station tokens and the upload protocol on a Station with its embedded PGlite storage.

import { startServer } from '../helpers/server.ts';
import { uploadsSuite } from './uploads-suite.ts';

uploadsSuite('uploads (PGlite)', (_name, env) => startServer('station', { env }));
