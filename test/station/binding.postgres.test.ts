// Instance binding and recovery tokens on two Stations sharing one PostgreSQL database (as
// behind a load balancer): the reservation must hold across processes, so it lives in the
// database. The second Station gets the first one's signing key, so each accepts the other's
// Station tokens.

import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPostgres } from '../helpers/postgres-runner.ts';
import { bindingSuite } from './binding-suite.ts';

const LABEL = 'binding (PostgreSQL, two Stations)';
onPostgres(LABEL, (stationOn) => {
  bindingSuite(LABEL, async () => {
    const first = await stationOn('binding');
    const dataDir = mkdtempSync(join(tmpdir(), 'backupd-station-'));
    const key = 'station-signing-key.pem';
    copyFileSync(join(first.dataDir, key), join(dataDir, key));
    return [first, await stationOn('binding', { dataDir })];
  });
});
