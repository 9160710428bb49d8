import { hostname } from 'node:os';
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { ConfigError, type ScoutConfig } from '../../core/config.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import { httpUrlField } from '../../shared/http-url.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';
import type { ScoutSettingsView } from '../../shared/protocol/settings.ts';

export const DEFAULT_CRON_SCHEDULE = '0 * * * *';
/** Restore drills: Sundays at 04:00. */
export const DEFAULT_DRILL_SCHEDULE = '0 4 * * 0';

const stationUrl = httpUrlField('station_url must be an http:// or https:// address');

/** What an admin may set. Omitted fields fall back to the environment, then the defaults. */
export const ScoutSettingsInput = z.strictObject({
  station_url: stationUrl.nullable().optional(),
  scout_id: z.string().refine(isNamespaceComponent, `scout_id must be ${NAMESPACE_RULE}`).optional(),
  scout_credential: z.string().trim().max(8192, 'scout_credential is too long').nullable().optional(),
  cron_schedule: z
    .string()
    .trim()
    .refine((value) => validCron(value), 'cron_schedule is not a valid cron expression (e.g. "0 * * * *")')
    .optional(),
  force_send_every_days: z
    .number({ error: 'force_send_every_days must be a whole number of days (0 = never)' })
    .int('force_send_every_days must be a whole number of days (0 = never)')
    .min(0, 'force_send_every_days must be 0 (never) or more days')
    .max(3650, 'force_send_every_days must be at most 3650 days')
    .optional(),
  drill_schedule: z
    .string()
    .trim()
    .refine(
      (value) => value === '' || validCron(value),
      'drill_schedule is not a valid cron expression (e.g. "0 4 * * 0"); an empty string turns drills off',
    )
    .optional(),
});

/** The Scout's settings as saved and answered (src/shared/protocol/settings.ts). */
export type ScoutSettings = ScoutSettingsView;

export const DEFAULT_FORCE_SEND_EVERY_DAYS = 7;

const SECTION = 'scout';

/** The host name made a valid namespace component. */
export function defaultScoutId(): string {
  const cleaned = hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^\.+/, '')
    .slice(0, 64);
  return cleaned || 'scout';
}

function clean<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined && v !== ''),
  ) as Partial<T>;
}

const VARIABLES: Record<keyof ScoutConfig['env'], string> = {
  station_url: 'STATION_URL',
  scout_id: 'SCOUT_ID',
  scout_credential: 'SCOUT_CREDENTIAL',
  cron_schedule: 'CRON_SCHEDULE',
};

/** Settings given by environment variables; a bad one stops start-up naming the variable. */
function fromEnvironment(env: ScoutConfig['env']): Partial<ScoutSettings> {
  const given = clean(env);
  const parsed = ScoutSettingsInput.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? '') as keyof ScoutConfig['env'];
    throw new ConfigError(`${VARIABLES[field] ?? field}: ${issue?.message ?? 'invalid value'}`);
  }
  return clean(parsed.data) as Partial<ScoutSettings>;
}

export function createScoutSettings(store: SettingsStore, config: ScoutConfig) {
  const defaults: ScoutSettings = {
    station_url: null,
    scout_id: defaultScoutId(),
    scout_credential: null,
    cron_schedule: DEFAULT_CRON_SCHEDULE,
    drill_schedule: DEFAULT_DRILL_SCHEDULE,
    force_send_every_days: DEFAULT_FORCE_SEND_EVERY_DAYS,
  };
  const base = { ...defaults, ...fromEnvironment(config.env) } as ScoutSettings;
  return {
    async read(): Promise<ScoutSettings> {
      const saved = ScoutSettingsInput.safeParse(await store.read(SECTION));
      const drills = saved.success ? saved.data.drill_schedule : undefined;
      // An empty drill_schedule is a choice (never), not a missing value.
      return {
        ...base,
        ...(saved.success ? clean(saved.data) : {}),
        ...(drills !== undefined ? { drill_schedule: drills } : {}),
      } as ScoutSettings;
    },
    /** Replaces the saved settings with `input`; returns the normalised effective settings. */
    async replace(input: z.infer<typeof ScoutSettingsInput>): Promise<ScoutSettings> {
      const drills = input.drill_schedule;
      await store.write(SECTION, {
        ...clean(input),
        ...(drills !== undefined ? { drill_schedule: drills } : {}),
      });
      return this.read();
    },
  };
}

export type ScoutSettingsService = ReturnType<typeof createScoutSettings>;
