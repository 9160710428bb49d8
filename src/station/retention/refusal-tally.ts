import type { UploadRefused } from './upload-rate.ts';

/** Uploads this Station process refused over the hourly limit, per job (for the metrics). */
export function createRefusalTally() {
  const counts = new Map<string, { labels: [string, string, string]; count: number }>();
  return {
    add(refused: UploadRefused): void {
      const key = JSON.stringify([refused.scout_id, refused.scout_instance_id, refused.job_name]);
      const entry = counts.get(key) ?? {
        labels: [refused.scout_id, refused.scout_instance_id, refused.job_name],
        count: 0,
      };
      entry.count += 1;
      counts.set(key, entry);
    },
    /** [scout_id, scout_instance_id, job_name, refused so far] per job. */
    entries(): [string, string, string, number][] {
      return [...counts.values()].map((e) => [...e.labels, e.count]);
    },
  };
}

export type RefusalTally = ReturnType<typeof createRefusalTally>;
