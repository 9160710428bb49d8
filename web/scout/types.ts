/** The Scout API's answers, as the console reads them (README, "Scout API"). */
import type { ErrorCode } from '../../src/shared/protocol/error-codes.ts';
import type { LastDrill } from '../common/drill.tsx';

export interface ScoutSettings {
  station_url: string | null;
  scout_id: string;
  scout_credential: string | null;
  cron_schedule: string;
  /** When restore drills run (cron); empty: never. */
  drill_schedule: string;
  /** A job whose newest snapshot is this many days old gets a fresh one; 0: never. */
  force_send_every_days: number;
}

export type OperationKind = 'cycle' | 'force_send' | 'restore' | 'drill';

export interface Operation {
  kind: OperationKind;
  job_name: string | null;
  phase: string;
  bytes_done: number;
  bytes_total: number;
  /** Entries a restore could not restore (in full) so far. */
  problems: number;
  started_at: string;
}

export interface ScoutStatus {
  scout_id: string;
  scout_instance_id: string;
  /** The folder searched for jobs (SCAN_ROOT), absolute. */
  scan_root: string;
  /** What is wrong with the scan root (missing, not a folder) and what to do; null when fine. */
  scan_root_problem: string | null;
  /** Omitted for non-admins and the `read` scope. */
  settings?: ScoutSettings;
  key_fingerprint: string;
  /** When the Scout key was fetched from the console or its fingerprint confirmed; null: not yet. */
  key_saved_at: string | null;
  uploads_paused: boolean;
  upload_circuit: {
    state: 'closed' | 'open' | 'half_open';
    consecutive_failures: number;
    retry_at: string | null;
  };
  /** What the Scout itself last saw of its Station. */
  station: StationContact;
  /** True from a run-now until its cycle starts on a job. */
  run_now_requested: boolean;
  scheduler: {
    state: 'idle' | 'running' | 'cancelling';
    cron_schedule: string;
    next_run_at: string | null;
    last_started_at: string | null;
    last_finished_at: string | null;
  };
  operation: Operation | null;
}

export interface StationContact {
  /** A Station address and token are saved. */
  configured: boolean;
  /** Whether the Station answered the Scout's last request; null before the first. */
  reachable: boolean | null;
  checked_at: string | null;
  /** The Scout's code for the Station's refusal; null when it accepted the request. */
  code: ErrorCode | null;
  detail: string | null;
}

/** What makes a job changed: paths and sizes, or modification times too. */
export type ChangeDetection = 'sizes' | 'mtimes';

export interface JobConfig {
  job_name: string;
  include_hidden: boolean;
  follow_symlinks: boolean;
  exclude: string[];
  change_detection?: ChangeDetection;
}

export interface JobState {
  last_status: 'never_run' | 'running' | 'uploaded' | 'unchanged' | 'failed' | 'cancelled';
  last_error: string | null;
  /** The stable code of last_error (what the console's badge is chosen by). */
  last_error_code?: ErrorCode | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_stored_as: string | null;
  /** When the files of the newest snapshot were read (a full-content snapshot). */
  last_snapshot_at?: string | null;
  /** The size of the snapshot stored as last_stored_as. */
  last_stored_bytes?: number | null;
  staged: boolean;
  /** When the waiting archive was made (its files are as they were then), or null. */
  staged_at?: string | null;
  /** The last restore drill of the job (null: none yet). */
  last_drill?: LastDrill | null;
  /** What the last snapshot left out: how many, and the first 20 paths (non-UTF-8 bytes as \xHH). */
  last_skipped?: { count: number; paths: string[] } | null;
}

export interface Directory {
  relative_path: string;
  config: JobConfig | null;
  config_error: string | null;
  state: JobState;
}

export interface DirectoryList {
  discovering: boolean;
  directories: Directory[];
}

export interface ChildFolder {
  name: string;
  relative_path: string;
  is_job: boolean;
}

export interface BrowseEntry {
  name: string;
  relative_path: string;
  type: 'file' | 'dir' | 'symlink';
  size: number | null;
  mtime: string | null;
  excluded: boolean;
  exclusion_reason: string | null;
}

export interface Browse {
  relative_path: string;
  /** The job the folder belongs to (its own path when it is a job), or null. */
  job: string | null;
  entries: BrowseEntry[];
}

export interface RestoreRequest {
  id: string;
  job_name: string;
  filename: string;
  status: string;
  source_scout_id: string;
  source_instance_id: string;
  created_at?: string;
  expires_at?: string;
}

/** `queued` / `already_running` and friends: HTTP 200 alone does not say the work started. */
export interface OperationReply {
  status: string;
}
