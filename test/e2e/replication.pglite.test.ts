// Off-site copy with PGlite Stations: the primary on its disk, the replica in a bucket on a real
// Ceph RADOS Gateway (test/helpers/ceph.ts).
import { onCeph } from '../helpers/ceph.ts';
import { startServer } from '../helpers/server.ts';
import { READY_MS, replicationSuite } from './replication-suite.ts';

const LABEL = 'off-site copy: disk primary -> S3 replica (PGlite)';
onCeph(LABEL, (ceph) => {
  replicationSuite(LABEL, {
    primary: () => startServer('station', { readyTimeoutMs: READY_MS }),
    replica: async () =>
      startServer('station', { readyTimeoutMs: READY_MS, env: (await ceph()).env('replica-pglite') }),
  });
});
