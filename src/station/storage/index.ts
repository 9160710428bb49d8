import type { StationConfig } from '../../core/config.ts';
import { createDiskStore } from './disk-store.ts';
import { createS3Store } from './s3-store.ts';
import type { SnapshotStore } from './storage.ts';

/** The one place the Station's snapshot store is chosen from its configuration. */
export function createSnapshotStore(config: StationConfig): SnapshotStore {
  if (config.s3) return createS3Store(config.s3);
  return createDiskStore({ backupRoot: config.backupRoot, stagingDir: config.stagingDir });
}

export type { SnapshotKey, SnapshotStore, StoredFile } from './storage.ts';
