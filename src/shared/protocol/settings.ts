/** `GET`/`POST /api/settings` of both roles (the Station's also in `GET /api/overview`). */
import type { ReplicationSettingsView } from './replication.ts';

/** The retention rules (integers ≥ 0; 0 = rule off), as Station settings and job overrides. */
export interface RetentionSettingsView {
  retention_keep_last: number;
  retention_keep_hourly: number;
  retention_keep_daily: number;
  retention_keep_weekly: number;
  retention_keep_monthly: number;
  retention_keep_yearly: number;
  retention_keep_within_days: number;
  retention_max_uploads_per_hour: number;
}

/** The Station's settings: retention and (on a replica) replication. */
export type StationSettingsView = RetentionSettingsView & ReplicationSettingsView;

/** The Scout's settings (an admin's or `manage` token's `GET /api/status` carries them too). */
export interface ScoutSettingsView {
  station_url: string | null;
  scout_id: string;
  /** The Station token (the published name of the field, docs/api.md). */
  scout_credential: string | null;
  cron_schedule: string;
  /** When restore drills run (cron); empty: never. */
  drill_schedule: string;
  /**
   * A job whose newest snapshot is this many days old gets a fresh one in its next cycle, even
   * when its fingerprint did not change (same-size edits); 0: never.
   */
  force_send_every_days: number;
}

/** `GET`/`POST /api/settings`: the settings as saved. */
export interface SettingsReply<Settings> {
  settings: Settings;
}

/** `POST …/uploads/pause` and `…/resume` (both roles). */
export interface UploadPauseReply {
  status: 'paused' | 'resumed';
  uploads_paused: boolean;
}
