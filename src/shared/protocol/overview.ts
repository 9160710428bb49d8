/**
 * `GET /api/overview` (the Station's dashboard; `?section=settings|storage|snapshots` for one
 * part): src/station/routes/settings.ts builds it, web/station/ shows it.
 */
import type { DrillOutcome } from './drills.ts';
import type { StationSettingsView } from './settings.ts';
import type { SnapshotFileName } from './snapshot-file.ts';

/** One stored snapshot in the overview. */
export interface OverviewSnapshot {
  /** The snapshot's file name (the protocol's `filename`: see snapshot-file.ts). */
  name: SnapshotFileName;
  size_bytes: number;
  /** The file's modification time (null when the store does not know it). */
  mtime: string | null;
  /** When the Station stored it (calendar retention counts by this). */
  stored_at: string | null;
  /** The job fingerprint the Scout declared for it. */
  fingerprint: string;
  /** An admin protected it: retention never deletes it, a delete is refused. */
  protected: boolean;
  /** Its object is under S3 Object Lock retention until then (null: not locked). */
  locked_until: string | null;
  /** Much smaller than the job's previous snapshot (a sign of lost files), with why. */
  unusual?: true;
  unusual_reason?: string;
  /** Indexed, but its file is gone from the store. */
  missing?: true;
}

export interface OverviewJob {
  job_name: string;
  /** Oldest first. */
  snapshots: OverviewSnapshot[];
  /** The last restore drill the Scout reported (null: none). */
  last_drill?: DrillOutcome | null;
}

export interface OverviewInstance {
  scout_instance_id: string;
  key_fingerprint: string | null;
  advertised_url: string | null;
  last_seen_at: string | null;
  jobs: OverviewJob[];
}

export interface OverviewScout {
  scout_id: string;
  instances: OverviewInstance[];
}

/** Where and how the Station stores snapshots, as `/health` and the overview report it. */
export interface StoreHealthView {
  kind: 'disk' | 's3';
  /** disk only */
  backup_root?: string;
  /** s3 only */
  bucket?: string;
  free_bytes: number | null;
  total_bytes: number | null;
  writable: boolean;
  /** Why the store is not writable. */
  problem?: string;
}

/** The overview's `storage`: the store's health, what it holds and the upload limits. */
export interface OverviewStorage extends StoreHealthView {
  used_bytes: number | null;
  snapshot_count: number;
  snapshot_bytes: number;
  staging_dir: string;
  max_upload_bytes: number;
  uploads_paused: boolean;
}

/** Each part is left out when not asked for (`section`) or not allowed (settings need `manage`). */
export interface Overview {
  settings?: StationSettingsView;
  storage?: OverviewStorage;
  scouts?: OverviewScout[];
}

export type OverviewSection = 'settings' | 'storage' | 'snapshots';
