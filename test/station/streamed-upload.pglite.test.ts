// Streamed uploads on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { streamedUploadSuite } from './streamed-upload-suite.ts';

streamedUploadSuite('streamed uploads (PGlite)', (_name, env) => startServer('station', { env }));
