/** `GET /api/retention/preview` and `/api/retention/jobs` (the Station's; src/station/routes/retention.ts). */
import type { RetentionSettingsView } from './settings.ts';
import type { SnapshotFileName } from './snapshot-file.ts';

/** A job's own rules: any of the retention fields; the others follow the Station. */
export type RetentionOverridesView = Partial<RetentionSettingsView>;

/** A snapshot in a preview. */
export interface PreviewSnapshot {
  filename: SnapshotFileName;
  timestamp: string;
  stored_at: string;
  size_bytes: number;
}

/** One job in a preview: what it keeps (and by which rules) and what would be deleted. */
export interface RetentionPreviewJob {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  policy: RetentionSettingsView;
  overrides: RetentionOverridesView;
  kept: Array<PreviewSnapshot & { reasons: string[] }>;
  deleted: PreviewSnapshot[];
}

export interface RetentionPreviewReply {
  now: string;
  /** The Station's policy the preview ran with (the trial's fields in place when no job was named). */
  policy: RetentionSettingsView;
  delete_count: number;
  delete_bytes: number;
  jobs: RetentionPreviewJob[];
}

export interface JobRetentionEntry {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  overrides: RetentionOverridesView;
}

/** `GET /api/retention/jobs`: every job that has overrides. */
export interface JobRetentionList {
  jobs: JobRetentionEntry[];
}

/** `POST /api/retention/jobs/{scout}/{instance}/{job}`: the overrides saved and what they make. */
export interface JobRetentionSaved extends JobRetentionEntry {
  effective: RetentionSettingsView;
}
