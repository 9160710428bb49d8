// A hostile Station-token holder on a Station with its embedded PGlite storage.
import { startServer } from '../helpers/server.ts';
import { backupAbuseSuite } from './backup-abuse-suite.ts';

backupAbuseSuite('hostile Station token (PGlite)', async () => [await startServer('station')]);
