import type { WindowCounter } from '../../core/auth/rate-limit.ts';
import { HOUR_MS } from '../../core/clock.ts';
import { tooManyRequests } from '../../core/errors.ts';
import type { JobKey } from '../services/snapshot-index.ts';
import { jobPath } from '../storage/layout.ts';

export interface UploadRefused {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  limit: number;
  /** True for the first refusal of the job's hour: the one that notifies. */
  first: boolean;
}

/**
 * retention_max_uploads_per_hour: new uploads of one job are counted per hour in the
 * Station's database (`rate_windows`, so Stations sharing it count together); beyond the
 * limit, initiation is refused with 429 until the hour ends. Junk can then neither fill the
 * disk nor crowd a job's snapshots.
 */
export function createUploadRate(windows: WindowCounter, onRefused: (event: UploadRefused) => void) {
  return {
    async check(ref: JobKey, limit: number, now: number): Promise<void> {
      const key = `uploads:${jobPath(ref)}`;
      const { count, windowEnd } = await windows.add(key, HOUR_MS);
      if (count <= limit) return;
      onRefused({
        scout_id: ref.scoutId,
        scout_instance_id: ref.instanceId,
        job_name: ref.jobName,
        limit,
        first: count === limit + 1,
      });
      throw tooManyRequests(
        Math.max(1, Math.ceil((windowEnd - now) / 1000)),
        `job ${ref.jobName} of ${ref.scoutId} already started ${limit} uploads this hour (retention_max_uploads_per_hour); try again later`,
      );
    },
  };
}

export type UploadRate = ReturnType<typeof createUploadRate>;
