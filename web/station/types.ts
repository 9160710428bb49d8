/** The Station API's answers as the dashboard reads them (README, "The API in brief"). */
import type { LastDrill } from '../common/drill.tsx';

export interface Snapshot {
  name: string;
  size_bytes: number;
  mtime: string | null;
  fingerprint?: string;
  unusual?: boolean;
  unusual_reason?: string;
  missing?: boolean;
  /** When the Station stored it (calendar retention counts by this). */
  stored_at?: string;
  /** An admin protected it: retention never deletes it, a delete is refused. */
  protected?: boolean;
  /** Its object is under S3 Object Lock retention until then (null: not locked). */
  locked_until?: string | null;
}

export interface Job {
  job_name: string;
  /** Oldest first. */
  snapshots: Snapshot[];
  /** The last restore drill the Scout reported (null: none). */
  last_drill?: LastDrill | null;
}

export interface Instance {
  scout_instance_id: string;
  key_fingerprint?: string | null;
  advertised_url?: string | null;
  last_seen_at?: string | null;
  jobs: Job[];
}

export interface Scout {
  scout_id: string;
  instances: Instance[];
}

export interface Storage {
  backup_root?: string;
  free_bytes: number | null;
  total_bytes: number | null;
  used_bytes?: number | null;
  writable?: boolean;
  snapshot_count?: number;
  snapshot_bytes?: number;
  staging_dir?: string;
  max_upload_bytes?: number;
  uploads_paused?: boolean;
}

export interface StationSettings {
  retention_keep_last: number;
  retention_keep_hourly: number;
  retention_keep_daily: number;
  retention_keep_weekly: number;
  retention_keep_monthly: number;
  retention_keep_yearly: number;
  retention_keep_within_days: number;
  retention_max_uploads_per_hour: number;
  [field: string]: number;
}

export interface Overview {
  settings?: StationSettings;
  storage?: Storage;
  scouts?: Scout[];
}

export interface Binding {
  scout_id: string;
  scout_instance_id: string;
  bound_at?: string | null;
}

export interface Credential {
  token_hash: string;
  created_at: string;
  expires_at: string;
  expired?: boolean;
  shared: boolean;
  max_registrations: number;
  registrations?: Binding[];
}

export interface Minted {
  credential: string;
  ttl_days: number;
  shared: boolean;
  max_registrations: number;
  message: string;
}

export type RestoreStatus = 'pending' | 'accepted' | 'rejected' | 'completed' | 'expired';

export interface RestoreRequest {
  id: string;
  source_scout_id: string;
  source_instance_id: string;
  target_scout_id: string;
  target_instance_id: string;
  job_name: string;
  filename: string;
  status: RestoreStatus | string;
  created_at: string;
  updated_at?: string;
  expires_at?: string;
}

export interface RestoreCreated {
  request: RestoreRequest;
  notified: boolean;
}

export interface VerifyFailure {
  scout_id: string;
  scout_instance_id: string | null;
  job_name: string;
  filename: string;
  problem: string;
}

export interface VerifyResult {
  status: 'never_run' | 'running' | 'ok' | 'failed' | string;
  started_at?: string | null;
  finished_at?: string | null;
  checked?: number;
  bytes?: number;
  failures?: VerifyFailure[];
}

/** Where a job's snapshots live: the three namespace components. */
export interface JobKey {
  scoutId: string;
  instanceId: string;
  jobName: string;
}
