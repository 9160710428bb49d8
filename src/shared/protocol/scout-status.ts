/** The Scout's `GET /api/status` and its operation answers (src/scout/routes/status.ts). */
import type { ErrorCode } from './error-codes.ts';
import type { ScoutSettingsView } from './settings.ts';

export type OperationKind = 'cycle' | 'force_send' | 'restore' | 'drill';

/** The one operation a Scout runs at a time. */
export interface OperationView {
  kind: OperationKind;
  job_name: string | null;
  phase: string;
  bytes_done: number;
  bytes_total: number;
  /** Entries a restore could not restore (in full) so far; 0 for other operations. */
  problems: number;
  started_at: string;
}

/** What the Scout itself last saw of its Station (`station` of the status; `POST /api/station/check`). */
export interface StationContactView {
  /** A Station address and token are saved. */
  configured: boolean;
  /** Whether the Station answered the Scout's last request; null before the first. */
  reachable: boolean | null;
  checked_at: string | null;
  /** The Scout's code for the Station's refusal; null when it accepted the request. */
  code: ErrorCode | null;
  detail: string | null;
}

export interface UploadCircuitView {
  state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  retry_at: string | null;
}

export interface SchedulerView {
  state: 'idle' | 'running' | 'cancelling';
  cron_schedule: string;
  next_run_at: string | null;
  last_started_at: string | null;
  last_finished_at: string | null;
}

export interface ScoutStatus {
  scout_id: string;
  scout_instance_id: string;
  /** The folder searched for jobs (SCAN_ROOT), absolute. */
  scan_root: string;
  /** What is wrong with the scan root (missing, not a folder) and what to do; null when fine. */
  scan_root_problem: string | null;
  /** Omitted for non-admins and the `read` scope. */
  settings?: ScoutSettingsView;
  key_fingerprint: string;
  /** When the Scout key was fetched from the console or its fingerprint confirmed; null: not yet. */
  key_saved_at: string | null;
  uploads_paused: boolean;
  upload_circuit: UploadCircuitView;
  station: StationContactView;
  /** True from a run-now until its cycle starts on a job. */
  run_now_requested: boolean;
  scheduler: SchedulerView;
  operation: OperationView | null;
}

/**
 * `POST /api/run-now`, `…/cancel-operation`, `…/directories/run-now|force-send`, `…/drills/run`:
 * `queued`, `started`, `already_running`, `cancelling`, … (HTTP 200 alone does not say the work started).
 */
export interface OperationReply {
  status: string;
}
