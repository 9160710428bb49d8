// The Station's upload, stored-snapshot, metrics and binding suites again, on PGlite with the
// snapshots in a real S3 bucket (one Ceph RADOS Gateway for the file): issue #15's "the existing
// Station suites pass with STORAGE_URL set". Every Station of these suites gets STORAGE_URL=s3://station-suites/<its
// data dir's name> (TEST_STORAGE_URL, see helpers/server.ts); tests about the disk store itself
// are skipped with "disk store only" (helpers/station-store.ts). Skipped without Ceph locally, a
// failure in CI.
import { type CephS3, onCeph } from '../../helpers/ceph.ts';
import { type ServerOptions, startServer } from '../../helpers/server.ts';
import { bindingSuite } from '../auth/binding-suite.ts';
import { stationTokensSuite } from '../auth/station-tokens-suite.ts';
import { metricsSuite } from '../snapshots/metrics-suite.ts';
import { snapshotDownloadsSuite } from '../snapshots/snapshot-downloads-suite.ts';
import { snapshotIntegritySuite } from '../snapshots/snapshot-integrity-suite.ts';
import { snapshotManagementSuite } from '../snapshots/snapshot-management-suite.ts';
import { snapshotOrderSuite } from '../snapshots/snapshot-order-suite.ts';
import { reservationsSuite } from '../uploads/reservations-suite.ts';
import { socketReadsSuite } from '../uploads/socket-reads-suite.ts';
import { streamedUploadSuite } from '../uploads/streamed-upload-suite.ts';
import { uploadFlowSuite } from '../uploads/upload-flow-suite.ts';
import { uploadRecoverySuite } from '../uploads/upload-recovery-suite.ts';
import { uploadRulesSuite } from '../uploads/upload-rules-suite.ts';
import { uploadValidationSuite } from '../uploads/upload-validation-suite.ts';

const BUCKET = 'station-suites';

onCeph('Station suites on S3 (Ceph)', (ceph) => {
  // Set while the suites register, so their disk-only tests know to step aside.
  process.env.TEST_STORAGE_URL = `s3://${BUCKET}`;
  let reached: Promise<CephS3> | undefined;
  /** Starts the gateway once; the endpoint and keys go where test stores and Stations read them. */
  const gateway = async () => {
    reached ??= ceph().then((c) => {
      const { STORAGE_URL: _perStation, ...s3 } = c.env(BUCKET);
      Object.assign(process.env, s3);
      return c;
    });
    return reached;
  };
  const station = async (options: ServerOptions = {}) => {
    await gateway();
    return startServer('station', options);
  };
  const withEnv = (_name: string, env: Record<string, string>) => station({ env });
  const label = (topic: string) => `${topic} (PGlite, S3)`;

  uploadFlowSuite(label('upload flow'), withEnv);
  uploadRulesSuite(label('unusual snapshots and retention'), withEnv);
  uploadRecoverySuite(label('disk space, crash and abandoned uploads'), withEnv);
  uploadValidationSuite(label('upload validation and limits'), withEnv);
  streamedUploadSuite(label('streamed uploads'), withEnv);
  socketReadsSuite(label('chunks read from their socket'), withEnv);
  stationTokensSuite(label('Station tokens and binding'), withEnv);
  snapshotDownloadsSuite(label('Scout recovery downloads'), () => station());
  snapshotManagementSuite(label('overview, snapshot and instance management'), () => station());
  snapshotIntegritySuite(label('verification and start-up reconciliation'), () => station());
  reservationsSuite(label('staging reservations'), station);
  snapshotOrderSuite(label('snapshot order'), () => station());
  metricsSuite(label('metrics'), () => station());
  bindingSuite(label('binding'), async () => [await station()]);
});
