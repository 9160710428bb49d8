// Retention settings the Station tests send (test/station/retention/retention-suite.ts,
// snapshot-order-suite.ts, retention-migration.test.ts, s3-object-lock.test.ts).

/** The calendar rules off (hourly to yearly 0): only keep_last and keep_within_days count. */
export const CALENDAR_OFF = {
  retention_keep_hourly: 0,
  retention_keep_daily: 0,
  retention_keep_weekly: 0,
  retention_keep_monthly: 0,
  retention_keep_yearly: 0,
};

/** The harshest policy: the newest snapshot and no calendar rules (hourly left as it is). */
export const KEEP_NEWEST_ONLY = {
  retention_keep_last: 1,
  retention_keep_daily: 0,
  retention_keep_weekly: 0,
  retention_keep_monthly: 0,
  retention_keep_yearly: 0,
};
