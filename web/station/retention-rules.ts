import type { RetentionSettingsView } from '../../src/shared/protocol/settings.ts';

/** The retention settings the Station page edits, each with the sentence that explains it. */
export interface RetentionRule {
  field: keyof RetentionSettingsView;
  id: string;
  label: string;
  hint: string;
}

export const RETENTION_RULES: RetentionRule[] = [
  {
    field: 'retention_keep_last',
    id: 'retention-keep-last',
    label: 'Snapshots kept per job and instance',
    hint: 'retention_keep_last, 1 to 100000: the newest this many snapshots of each job and instance, newest by the time each snapshot was taken.',
  },
  {
    field: 'retention_keep_hourly',
    id: 'retention-keep-hourly',
    label: 'Hours kept',
    hint: 'retention_keep_hourly, 0 = off: in each of the last this many hours that have a snapshot, the first snapshot the Station stored in that hour.',
  },
  {
    field: 'retention_keep_daily',
    id: 'retention-keep-daily',
    label: 'Days kept',
    hint: 'retention_keep_daily, 0 = off: one snapshot a day (the first stored that day, UTC) for the last this many days that have one.',
  },
  {
    field: 'retention_keep_weekly',
    id: 'retention-keep-weekly',
    label: 'Weeks kept',
    hint: 'retention_keep_weekly, 0 = off: the first snapshot stored in each of the last this many weeks (Monday to Sunday) that have one.',
  },
  {
    field: 'retention_keep_monthly',
    id: 'retention-keep-monthly',
    label: 'Months kept',
    hint: 'retention_keep_monthly, 0 = off: the first snapshot stored in each of the last this many months that have one.',
  },
  {
    field: 'retention_keep_yearly',
    id: 'retention-keep-yearly',
    label: 'Years kept',
    hint: 'retention_keep_yearly, 0 = off: the first snapshot stored in each of the last this many years that have one.',
  },
  {
    field: 'retention_keep_within_days',
    id: 'retention-keep-within-days',
    label: 'Never delete snapshots younger than (days)',
    hint: 'retention_keep_within_days, 0 to 36500; 0 is off. Every snapshot stored within this many days is kept whatever the rules above say.',
  },
  {
    field: 'retention_max_uploads_per_hour',
    id: 'retention-max-uploads-per-hour',
    label: 'Uploads per job per hour',
    hint: 'retention_max_uploads_per_hour, at least 1: more new uploads of one job within an hour are refused (429) and you are notified once, so junk can neither fill the disk nor crowd out history.',
  },
];
