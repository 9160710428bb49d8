// Station tokens, instance binding and recovery tokens, registered on one database by
// tokens.pglite.test.ts and tokens.postgres.test.ts. On PostgreSQL the binding suite runs on
// two Stations sharing the database (as behind a load balancer): the reservation must hold
// across processes, and each Station accepts the other's tokens (one signing key).
import type { Database } from '../../helpers/database-runner.ts';
import { onDatabase } from '../../helpers/database-runner.ts';
import { bindingSuite } from './binding-suite.ts';
import { stationTokensSuite } from './station-tokens-suite.ts';

export function tokenSuites(database: Database): void {
  onDatabase(database, 'Station tokens', (stationOn, on) => {
    stationTokensSuite(on('Station tokens and binding'), (name, env) =>
      stationOn(`station_tokens_${name}`, { env }),
    );
    bindingSuite(on(database === 'postgres' ? 'binding (two Stations)' : 'binding'), async () =>
      database === 'postgres'
        ? [await stationOn('binding'), await stationOn('binding')]
        : [await stationOn('binding')],
    );
  });
}
