// Off-site copy with Stations on PostgreSQL, the other way round: the primary in a bucket on a
// real Ceph RADOS Gateway, the replica on its disk.
import { onCeph } from '../helpers/ceph.ts';
import { onPostgres } from '../helpers/postgres-runner.ts';
import { READY_MS, replicationSuite } from './replication-suite.ts';

const LABEL = 'off-site copy: S3 primary -> disk replica (PostgreSQL)';
onCeph(LABEL, (ceph) => {
  onPostgres(LABEL, (stationOn) => {
    replicationSuite(LABEL, {
      primary: async () =>
        stationOn('primary', { readyTimeoutMs: READY_MS, env: (await ceph()).env('primary-pg') }),
      replica: () => stationOn('replica', { readyTimeoutMs: READY_MS }),
      replicaTwin: () => stationOn('replica', { readyTimeoutMs: READY_MS }),
    });
  });
});
