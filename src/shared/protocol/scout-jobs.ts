/** The Scout's jobs and the folders under its scan root: `/api/directories` (src/scout/routes/directories.ts). */
import { z } from 'zod';
import type { DrillOutcome } from './drills.ts';
import type { ErrorCode } from './error-codes.ts';

/**
 * What makes a job "changed": `sizes` (the default: paths, sizes and empty folders, as
 * docs/archive-format.md defines the job fingerprint) or `mtimes` (modification times count
 * too, so a same-size edit is backed up).
 */
export const CHANGE_DETECTIONS = ['sizes', 'mtimes'] as const;
export type ChangeDetection = (typeof CHANGE_DETECTIONS)[number];

/** A job's marker (`.upload_dir`) as read (src/scout/jobs/marker.ts parses it). */
export interface JobConfigView {
  job_name: string;
  include_hidden: boolean;
  follow_symlinks: boolean;
  exclude: string[];
  /** Always set by the marker parser; absent (= `sizes`) in configurations built by hand. */
  change_detection?: ChangeDetection;
}

export type LastStatus = 'never_run' | 'running' | 'uploaded' | 'unchanged' | 'failed' | 'cancelled';

/** A job's local state. */
export interface JobStateView {
  last_status: LastStatus;
  last_error: string | null;
  /** The stable code of last_error (what the console's badge is chosen by). */
  last_error_code: ErrorCode | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_stored_as: string | null;
  /** The size of the snapshot stored as last_stored_as. */
  last_stored_bytes: number | null;
  /** When the files of the newest snapshot were read (a full-content snapshot). */
  last_snapshot_at: string | null;
  staged: boolean;
  /** When the waiting archive was made (its files are as they were then), or null. */
  staged_at: string | null;
  /** The last restore drill of the job (null: none yet). */
  last_drill: DrillOutcome | null;
  /** What the last snapshot left out: how many, and the first 20 paths (non-UTF-8 bytes as \xHH). */
  last_skipped: { count: number; paths: string[] } | null;
}

/** A job folder (a marker file), valid or not. */
export interface DirectoryView {
  relative_path: string;
  config: JobConfigView | null;
  config_error: string | null;
  state: JobStateView;
}

/** `GET /api/directories`. */
export interface DirectoryList {
  discovering: boolean;
  directories: DirectoryView[];
}

/** `POST /api/directories/save-job`. */
export interface DirectorySaved {
  directory: DirectoryView;
}

export interface ChildFolder {
  name: string;
  relative_path: string;
  is_job: boolean;
}

/** `GET /api/directories/children?relative_path=…`: the folders under one. */
export interface ChildFolderList {
  relative_path: string;
  directories: ChildFolder[];
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

/** `GET /api/directories/browse?relative_path=…`. */
export interface Browse {
  relative_path: string;
  /** The job the folder belongs to (its own path when it is a job), or null. */
  job: string | null;
  entries: BrowseEntry[];
}

/** `GET /api/directories/size?relative_path=…`. */
export interface FolderSizeView {
  relative_path: string;
  bytes: number;
  files: number;
}

/** The body of `POST /api/directories/{delete-job,exclude,run-now,force-send,clear-staged}`. */
export const DirectoryPathSchema = z.object({
  relative_path: z.string({ error: 'relative_path is required' }),
});
export type DirectoryPathBody = z.input<typeof DirectoryPathSchema>;

/** The query of `GET /api/directories/{children,browse,size}`. */
export const DirectoryQuerySchema = z.object({
  relative_path: z.string({ error: 'relative_path is required (use "." for the scan root)' }),
});
