import { z } from 'zod';
import { ConfigError } from '../../core/config.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import {
  LEGACY_DEFAULTS,
  NEW_STATION_DEFAULTS,
  type RetentionSettings,
  retentionShape,
  stripUndefined,
} from '../retention/fields.ts';

/** What an admin may set. Omitted fields fall back to the environment, then the defaults. */
export const StationSettingsInput = z.strictObject({ ...retentionShape });

export type StationSettings = RetentionSettings;

const SECTION = 'station';
const DEFAULTS_MARKER = 'retention_defaults';

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
  const fromEnv = fromEnvironment(env);
  return {
    async read(): Promise<StationSettings> {
      // A Station that ran before calendar rules keeps its keep_last 30 (migration 0007).
      const legacy = (await store.read(DEFAULTS_MARKER)).legacy === true;
      const defaults = { ...(legacy ? LEGACY_DEFAULTS : NEW_STATION_DEFAULTS), ...fromEnv };
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

export type StationSettingsService = ReturnType<typeof createStationSettings>;
