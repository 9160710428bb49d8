// The storage conformance suite on the S3 store against a real Ceph RADOS Gateway.

import { parseS3Config } from '../../src/core/s3-config.ts';
import { createS3Store } from '../../src/station/storage/s3-store.ts';
import { onCeph } from '../helpers/ceph.ts';
import { storageConformanceSuite } from './storage-conformance-suite.ts';

onCeph('storage conformance (S3 on Ceph)', (ceph) => {
  storageConformanceSuite('storage conformance (S3 on Ceph)', async () => {
    const env = (await ceph()).env('conformance', 'station/a');
    const config = parseS3Config(env, (message) => new Error(message));
    if (!config) throw new Error('no S3 configuration');
    return { open: () => createS3Store(config) };
  });
});
