import { and, eq } from 'drizzle-orm';
import type { Clock } from '../../core/clock.ts';
import type { JobRetentionEntry } from '../../shared/protocol/retention.ts';
import type { StationDb } from '../db/open.ts';
import { jobRetention } from '../db/station-tables.ts';
import type { JobKey } from '../services/snapshot-index.ts';
import type { StationSettingsService } from '../services/station-settings.ts';
import {
  RetentionOverrides,
  type RetentionOverridesInput,
  type RetentionSettings,
  stripUndefined,
} from './fields.ts';

const sameJob = (ref: JobKey) =>
  and(
    eq(jobRetention.scoutId, ref.scoutId),
    eq(jobRetention.scoutInstanceId, ref.instanceId),
    eq(jobRetention.jobName, ref.jobName),
  );

const parse = (text: string): RetentionOverridesInput => {
  const parsed = RetentionOverrides.safeParse(JSON.parse(text));
  return parsed.success ? stripUndefined(parsed.data) : {};
};

/** Per-job retention overrides over the Station's settings (table `job_retention`). */
export function createJobRetention(db: StationDb, settings: StationSettingsService, clock: Clock) {
  async function overrides(ref: JobKey): Promise<RetentionOverridesInput> {
    const [row] = await db.select().from(jobRetention).where(sameJob(ref));
    return row ? parse(row.overrides) : {};
  }

  return {
    overrides,

    /** The job's effective settings: its overrides over the Station's. */
    async effective(ref: JobKey): Promise<RetentionSettings> {
      const [station, own] = await Promise.all([settings.read(), overrides(ref)]);
      return { ...station, ...own };
    },

    /** Every job that has overrides. */
    async list(): Promise<JobRetentionEntry[]> {
      const rows = await db.select().from(jobRetention);
      return rows.map((row) => ({
        scout_id: row.scoutId,
        scout_instance_id: row.scoutInstanceId,
        job_name: row.jobName,
        overrides: parse(row.overrides),
      }));
    },

    /** Replaces the job's overrides; `{}` removes them (the job follows the Station again). */
    async replace(ref: JobKey, input: RetentionOverridesInput): Promise<RetentionOverridesInput> {
      const value = stripUndefined(input);
      if (Object.keys(value).length === 0) {
        await db.delete(jobRetention).where(sameJob(ref));
        return {};
      }
      const text = JSON.stringify(value);
      const now = clock.now();
      await db
        .insert(jobRetention)
        .values({
          scoutId: ref.scoutId,
          scoutInstanceId: ref.instanceId,
          jobName: ref.jobName,
          overrides: text,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [jobRetention.scoutId, jobRetention.scoutInstanceId, jobRetention.jobName],
          set: { overrides: text, updatedAt: now },
        });
      return value;
    },
  };
}

export type JobRetention = ReturnType<typeof createJobRetention>;
