import type { JobKey } from '../shared/protocol/job-key.ts';

/** One job on the Station: the Scout, its instance and the job's name (the key of every snapshot). */
export type { JobKey };

/**
 * A job's key as the snapshot stores know it: `instanceId` null is the legacy layout
 * `<scout>/<job>/<file>` of snapshots stored before instances existed.
 */
export type StoredJobKey = Omit<JobKey, 'instanceId'> & { instanceId: string | null };
