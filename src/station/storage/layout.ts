import { isNamespaceComponent } from '../../shared/namespace.ts';
import type { StoredJobKey } from '../job-key.ts';
import { checkComponent, checkFilename, isSnapshotFilename } from './keys.ts';
import type { SnapshotKey } from './storage.ts';

/**
 * The snapshot layout, the same in every store: `<scout_id>/<scout_instance_id>/<job_name>/<file>`,
 * folders under BACKUP_ROOT on the disk (disk-store.ts), object keys under PREFIX in a bucket
 * (s3-keys.ts). `instanceId` null is the legacy layout `<scout_id>/<job_name>/<file>` of
 * snapshots stored before instance IDs (read and deleted on the disk, never written or listed).
 */
/** The folders of a job, each checked (`checkComponent`): no path or key leaves its root or prefix. */
export function jobFolders(at: StoredJobKey): string[] {
  checkComponent('scout_id', at.scoutId);
  if (at.instanceId !== null) checkComponent('scout_instance_id', at.instanceId);
  checkComponent('job_name', at.jobName);
  return at.instanceId === null ? [at.scoutId, at.jobName] : [at.scoutId, at.instanceId, at.jobName];
}

/** The folders of a job and the snapshot's file name, each checked. */
export function snapshotSegments(key: SnapshotKey): string[] {
  checkFilename(key.filename);
  return [...jobFolders(key), key.filename];
}

/** The folders of one Scout instance (what removing the instance removes), each checked. */
export function instanceFolders(scoutId: string, instanceId: string): string[] {
  checkComponent('scout_id', scoutId);
  checkComponent('scout_instance_id', instanceId);
  return [scoutId, instanceId];
}

/**
 * The snapshot a path of the instance layout names (`[scout, instance, job, file]`), or null for
 * anything else: what a store lists as a snapshot.
 */
export function snapshotAt(segments: readonly string[]): SnapshotKey | null {
  if (segments.length !== 4) return null;
  const [scoutId = '', instanceId = '', jobName = '', filename = ''] = segments;
  if (![scoutId, instanceId, jobName].every(isNamespaceComponent) || !isSnapshotFilename(filename))
    return null;
  return { scoutId, instanceId, jobName, filename };
}

/** A job as one string, `scout/instance/job`: its name in sets, maps and logs (not checked). */
export const jobPath = (at: StoredJobKey): string =>
  at.instanceId === null ? `${at.scoutId}/${at.jobName}` : `${at.scoutId}/${at.instanceId}/${at.jobName}`;

/** A snapshot as one string, `scout/instance/job/file`: its name in sets, maps and logs (not checked). */
export const snapshotPath = (key: SnapshotKey): string => `${jobPath(key)}/${key.filename}`;
