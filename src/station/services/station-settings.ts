import { z } from 'zod';
import { ConfigError } from '../../core/config.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';

export const DEFAULT_RETENTION_KEEP_LAST = 30;

/** What an admin may set. Omitted fields fall back to the environment, then the defaults. */
export const StationSettingsInput = z.strictObject({
  retention_keep_last: z
    .number()
    .int('retention_keep_last must be a whole number')
    .min(1, 'retention_keep_last must be at least 1')
    .max(100_000, 'retention_keep_last must be at most 100000')
    .optional(),
  retention_keep_within_days: z
    .number({ error: 'retention_keep_within_days must be a whole number of days (0 = off)' })
    .int('retention_keep_within_days must be a whole number of days (0 = off)')
    .min(0, 'retention_keep_within_days must be 0 (off) or more')
    .max(36_500, 'retention_keep_within_days must be at most 36500')
    .optional(),
});

export type StationSettings = { retention_keep_last: number; retention_keep_within_days: number };

const SECTION = 'station';

/** RETENTION_KEEP_LAST as the default of retention_keep_last; a bad value stops start-up. */
function fromEnvironment(env: Record<string, string | undefined>): Partial<StationSettings> {
  const keep = env.RETENTION_KEEP_LAST;
  if (keep === undefined || keep.trim() === '') return {};
  const parsed = StationSettingsInput.shape.retention_keep_last.safeParse(
    /^\d+$/.test(keep.trim()) ? Number(keep) : Number.NaN,
  );
  if (!parsed.success || parsed.data === undefined) {
    throw new ConfigError(`RETENTION_KEEP_LAST must be a whole number from 1 to 100000, got "${keep}"`);
  }
  return { retention_keep_last: parsed.data };
}

export function createStationSettings(store: SettingsStore, env = process.env) {
  const defaults: StationSettings = {
    retention_keep_last: DEFAULT_RETENTION_KEEP_LAST,
    retention_keep_within_days: 0,
    ...fromEnvironment(env),
  };
  return {
    async read(): Promise<StationSettings> {
      const saved = StationSettingsInput.safeParse(await store.read(SECTION));
      return { ...defaults, ...(saved.success ? stripUndefined(saved.data) : {}) };
    },
    /** Replaces the saved settings with `input`; returns the normalised effective settings. */
    async replace(input: z.infer<typeof StationSettingsInput>): Promise<StationSettings> {
      await store.write(SECTION, stripUndefined(input));
      return this.read();
    },
  };
}

function stripUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export type StationSettingsService = ReturnType<typeof createStationSettings>;
