import { isNamespaceComponent } from '../../shared/namespace.ts';
import { checkComponent, checkFilename, isSnapshotFilename } from './keys.ts';
import type { SnapshotKey, StoredJobKey } from './storage.ts';

/**
 * Object keys of the S3 store: `PREFIX<scout_id>/<scout_instance_id>/<job_name>/<file>` (the
 * disk layout under BACKUP_ROOT; `PREFIX` is '' or ends in '/'). Every key is built from
 * validated components, and only keys of that shape are read back as snapshots.
 */
export function s3Keys(prefix: string) {
  function folderOf(at: StoredJobKey): string {
    checkComponent('scout_id', at.scoutId);
    if (at.instanceId !== null) checkComponent('scout_instance_id', at.instanceId);
    checkComponent('job_name', at.jobName);
    const parts = at.instanceId === null ? [at.scoutId, at.jobName] : [at.scoutId, at.instanceId, at.jobName];
    return `${prefix}${parts.join('/')}/`;
  }

  return {
    prefix,
    folderOf,

    keyOf(key: SnapshotKey): string {
      checkFilename(key.filename);
      return `${folderOf(key)}${key.filename}`;
    },

    instanceFolder(scoutId: string, instanceId: string): string {
      checkComponent('scout_id', scoutId);
      checkComponent('scout_instance_id', instanceId);
      return `${prefix}${scoutId}/${instanceId}/`;
    },

    /** The snapshot a listed key names (instance layout only), or null for anything else. */
    parse(objectKey: string): SnapshotKey | null {
      if (!objectKey.startsWith(prefix)) return null;
      const parts = objectKey.slice(prefix.length).split('/');
      if (parts.length !== 4) return null;
      const [scoutId = '', instanceId = '', jobName = '', filename = ''] = parts;
      if (![scoutId, instanceId, jobName].every(isNamespaceComponent) || !isSnapshotFilename(filename))
        return null;
      return { scoutId, instanceId, jobName, filename };
    },
  };
}

export type S3Keys = ReturnType<typeof s3Keys>;
