// The storage conformance suite on the local disk store (BACKUP_ROOT + STAGING_DIR in a temp dir).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createDiskStore } from '../../../src/station/storage/disk-store.ts';
import { storageConformanceSuite } from './storage-conformance-suite.ts';

const dir = await mkdtemp(join(tmpdir(), 'backupd-disk-store-'));
after(() => rm(dir, { recursive: true, force: true }));

storageConformanceSuite('storage conformance (disk)', async () => ({
  open: () => createDiskStore({ backupRoot: join(dir, 'snapshots'), stagingDir: join(dir, 'staging') }),
}));
