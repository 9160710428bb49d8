import { z } from 'zod';

/** The retention rules (integers ≥ 0, 0 = rule off) and their limits. */
export const RULES = [
  'retention_keep_last',
  'retention_keep_hourly',
  'retention_keep_daily',
  'retention_keep_weekly',
  'retention_keep_monthly',
  'retention_keep_yearly',
  'retention_keep_within_days',
] as const;
export type Rule = (typeof RULES)[number];

export type RetentionPolicy = Record<Rule, number>;
/** A policy plus the per-job upload limit: what the Station settings and job overrides hold. */
export type RetentionSettings = RetentionPolicy & { retention_max_uploads_per_hour: number };

const MAX_COUNT = 100_000;

const whole = (field: string, min: number, max: number, off: string) =>
  z
    .number({ error: `${field} must be a whole number${off}` })
    .int(`${field} must be a whole number${off}`)
    .min(min, min === 0 ? `${field} must be 0 (off) or more` : `${field} must be at least ${min}`)
    .max(max, `${field} must be at most ${max}`);

/** Each field's schema; every one optional (omitted = the Station's value, then the default). */
export const retentionShape = {
  retention_keep_last: whole('retention_keep_last', 1, MAX_COUNT, '').optional(),
  retention_keep_hourly: whole('retention_keep_hourly', 0, MAX_COUNT, ' (0 = off)').optional(),
  retention_keep_daily: whole('retention_keep_daily', 0, MAX_COUNT, ' (0 = off)').optional(),
  retention_keep_weekly: whole('retention_keep_weekly', 0, MAX_COUNT, ' (0 = off)').optional(),
  retention_keep_monthly: whole('retention_keep_monthly', 0, MAX_COUNT, ' (0 = off)').optional(),
  retention_keep_yearly: whole('retention_keep_yearly', 0, MAX_COUNT, ' (0 = off)').optional(),
  retention_keep_within_days: z
    .number({ error: 'retention_keep_within_days must be a whole number of days (0 = off)' })
    .int('retention_keep_within_days must be a whole number of days (0 = off)')
    .min(0, 'retention_keep_within_days must be 0 (off) or more')
    .max(36_500, 'retention_keep_within_days must be at most 36500')
    .optional(),
  retention_max_uploads_per_hour: whole('retention_max_uploads_per_hour', 1, MAX_COUNT, '').optional(),
};

/** A job's overrides: any of the fields; the others follow the Station. */
export const RetentionOverrides = z.strictObject(retentionShape);
export type RetentionOverridesInput = z.infer<typeof RetentionOverrides>;

/** What a new Station keeps (restic/Borg-like): the last 3, then 7 days, 5 weeks, 12 months, 3 years. */
export const NEW_STATION_DEFAULTS: RetentionSettings = {
  retention_keep_last: 3,
  retention_keep_hourly: 0,
  retention_keep_daily: 7,
  retention_keep_weekly: 5,
  retention_keep_monthly: 12,
  retention_keep_yearly: 3,
  retention_keep_within_days: 0,
  retention_max_uploads_per_hour: 12,
};

/** What a Station that ran before calendar rules existed keeps unless its admin changes it. */
export const LEGACY_DEFAULTS: RetentionSettings = {
  ...NEW_STATION_DEFAULTS,
  retention_keep_last: 30,
  retention_keep_daily: 0,
  retention_keep_weekly: 0,
  retention_keep_monthly: 0,
  retention_keep_yearly: 0,
};

export function stripUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
