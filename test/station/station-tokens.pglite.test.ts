// Station tokens and binding on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { stationTokensSuite } from './station-tokens-suite.ts';

stationTokensSuite('Station tokens and binding (PGlite)', (_name, env) => startServer('station', { env }));
