// Instance binding and recovery tokens on a Station with its embedded PGlite storage.

import { startServer } from '../helpers/server.ts';
import { bindingSuite } from './binding-suite.ts';

bindingSuite('binding (PGlite)', async () => [await startServer('station')]);
