import type { StationConfig } from '../../core/config.ts';
import { createDiskStore } from './disk-store.ts';
import { createS3Store } from './s3-store.ts';
import type { SnapshotStorage } from './storage.ts';

/** The one place the Station's snapshot store is chosen from its configuration. */
export function createStorage(config: StationConfig): SnapshotStorage {
  if (config.s3) return createS3Store(config.s3);
  return createDiskStore({ backupRoot: config.backupRoot, stagingDir: config.stagingDir });
}

export type { SnapshotKey, SnapshotStorage, StoredFile } from './storage.ts';
