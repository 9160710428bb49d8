import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import type { ReplicationSettingsView } from '../../shared/protocol/replication.ts';

export const DEFAULT_REPLICATION_SCHEDULE = '0 * * * *';
export const DEFAULT_MAX_LAG_HOURS = 48;

/**
 * The replica's settings, part of `POST /api/settings`. An omitted field keeps its saved value;
 * `replication_token` is write-only ("" or null removes it) and answers show only
 * `replication_token_set`.
 */
export const ReplicationSettingsInput = z.strictObject({
  replication_source_url: z
    .string()
    .trim()
    .max(2000, 'replication_source_url is too long')
    .refine(
      (url) => url === '' || /^https?:\/\/[^\s/]+/i.test(url),
      'replication_source_url must be the primary Station\'s http:// or https:// address (or "" for none)',
    )
    .optional(),
  replication_token: z.string().trim().max(500, 'replication_token is too long').nullable().optional(),
  replication_schedule: z
    .string()
    .trim()
    .refine(
      (value) => value === '' || validCron(value),
      'replication_schedule is not a valid cron expression (e.g. "0 * * * *"); an empty string turns scheduled copies off',
    )
    .optional(),
  replication_bytes_per_second: z
    .number({ error: 'replication_bytes_per_second must be a whole number (0 = unlimited)' })
    .int('replication_bytes_per_second must be a whole number (0 = unlimited)')
    .min(0, 'replication_bytes_per_second must be 0 (unlimited) or more')
    .optional(),
  replication_max_lag_hours: z
    .number({ error: 'replication_max_lag_hours must be a whole number of hours (0 = no alert)' })
    .int('replication_max_lag_hours must be a whole number of hours (0 = no alert)')
    .min(0, 'replication_max_lag_hours must be 0 (no alert) or more')
    .max(87_600, 'replication_max_lag_hours must be at most 87600')
    .optional(),
});

export type ReplicationSettingsInput = z.infer<typeof ReplicationSettingsInput>;

const SECTION = 'replication';

/**
 * Kept in the database's settings (the row `replication`): the token is a secret this Station
 * must present to the primary, so it is stored as it is (not a hash), readable only by this
 * Station's own database user, and never returned by any route or written to a log.
 */
export function createReplicationSettings(store: SettingsStore) {
  async function saved(): Promise<Record<string, unknown>> {
    const parsed = ReplicationSettingsInput.safeParse(await store.read(SECTION));
    return parsed.success ? parsed.data : {};
  }
  return {
    async read(): Promise<ReplicationSettingsView> {
      const s = (await saved()) as ReplicationSettingsInput;
      return {
        replication_source_url: s.replication_source_url ?? '',
        replication_token_set: Boolean(s.replication_token),
        replication_schedule: s.replication_schedule ?? DEFAULT_REPLICATION_SCHEDULE,
        replication_bytes_per_second: s.replication_bytes_per_second ?? 0,
        replication_max_lag_hours: s.replication_max_lag_hours ?? DEFAULT_MAX_LAG_HOURS,
      };
    },
    /** The primary's address and this replica's token, when both are set. */
    async source(): Promise<{ url: string; token: string } | null> {
      const s = (await saved()) as ReplicationSettingsInput;
      if (!s.replication_source_url || !s.replication_token) return null;
      return { url: s.replication_source_url.replace(/\/+$/, ''), token: s.replication_token };
    },
    /** Saves the given fields (omitted ones keep their value). */
    async update(input: ReplicationSettingsInput): Promise<ReplicationSettingsView> {
      const next: Record<string, unknown> = { ...(await saved()) };
      for (const [name, value] of Object.entries(input)) if (value !== undefined) next[name] = value;
      if (!next.replication_token) delete next.replication_token;
      await store.write(SECTION, next);
      return this.read();
    },
  };
}

export type ReplicationSettingsService = ReturnType<typeof createReplicationSettings>;
