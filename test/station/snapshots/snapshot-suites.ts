// The suites about stored snapshots (downloads, integrity, management, order, the jobs API,
// metrics), registered on one database by snapshots.pglite.test.ts and snapshots.postgres.test.ts.
import type { Database } from '../../helpers/database-runner.ts';
import { onDatabase } from '../../helpers/database-runner.ts';
import { jobsApiSuite } from './jobs-api-suite.ts';
import { metricsSuite } from './metrics-suite.ts';
import { snapshotDownloadsSuite } from './snapshot-downloads-suite.ts';
import { snapshotIntegritySuite } from './snapshot-integrity-suite.ts';
import { snapshotManagementSuite } from './snapshot-management-suite.ts';
import { snapshotOrderSuite } from './snapshot-order-suite.ts';

export function snapshotSuites(database: Database): void {
  onDatabase(database, 'snapshots', (stationOn, on) => {
    snapshotDownloadsSuite(on('Scout recovery downloads'), () => stationOn('snapshot_downloads'));
    snapshotIntegritySuite(on('verification and start-up reconciliation'), () =>
      stationOn('snapshot_integrity'),
    );
    snapshotManagementSuite(on('overview, snapshot and instance management'), () =>
      stationOn('snapshot_management'),
    );
    snapshotOrderSuite(on('snapshot order'), () => stationOn('snapshot_order'));
    jobsApiSuite(on('jobs API'), () => stationOn('jobs_api'));
    // On PostgreSQL a second Station on the same database reports the same snapshot gauges.
    metricsSuite(
      on('metrics'),
      () => stationOn('metrics'),
      database === 'postgres' ? (env) => stationOn('metrics', { env }) : undefined,
    );
  });
}
