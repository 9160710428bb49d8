import { instanceFolders, snapshotAt, snapshotSegments } from './layout.ts';
import type { SnapshotKey } from './storage.ts';

/**
 * Object keys of the S3 store: the snapshot layout (layout.ts) under `PREFIX` ('' or ending in
 * '/'). Every key is built from checked components, and only keys of that shape are read back
 * as snapshots.
 */
export function s3Keys(prefix: string) {
  return {
    prefix,

    keyOf: (key: SnapshotKey): string => `${prefix}${snapshotSegments(key).join('/')}`,

    instanceFolder: (scoutId: string, instanceId: string): string =>
      `${prefix}${instanceFolders(scoutId, instanceId).join('/')}/`,

    /** The snapshot a listed key names (instance layout only), or null for anything else. */
    parse(objectKey: string): SnapshotKey | null {
      if (!objectKey.startsWith(prefix)) return null;
      return snapshotAt(objectKey.slice(prefix.length).split('/'));
    },
  };
}

export type S3Keys = ReturnType<typeof s3Keys>;
