// Scout recovery downloads on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { snapshotDownloadsSuite } from './snapshot-downloads-suite.ts';

snapshotDownloadsSuite('Scout recovery downloads (PGlite)', () => startServer('station'));
