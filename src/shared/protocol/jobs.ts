/**
 * `GET /api/jobs`: the Station's jobs one page at a time, each with its health, and
 * `GET /api/jobs/{scout_id}/{scout_instance_id}/{job_name}/snapshots`: one job's snapshots on
 * demand (docs/api-jobs.md). The dashboard reads these instead of the whole `/api/overview`.
 */
import type { DrillOutcome } from './drills.ts';
import type { OverviewSnapshot } from './overview.ts';

/**
 * A job's health, decided on the Station (src/station/services/job-health.ts), worst first:
 * `failing` (no snapshot left, a file missing, or the last restore drill failed), `stale` (the
 * newest snapshot is older than `stale_after_days`), `not_proven` (no restore drill passed
 * within `proven_within_days`), `ok`.
 */
export const JOB_HEALTH = ['failing', 'stale', 'not_proven', 'ok'] as const;
export type JobHealth = (typeof JOB_HEALTH)[number];

/**
 * What is wrong with a job, each a fact the health is decided from (a job can have several):
 * `empty` no snapshot present, `files_missing` indexed snapshots whose file is gone,
 * `drill_failed`, `stale`, `not_proven`, `newest_unusual` (the newest snapshot is unusual:
 * worth a look, the health stays as it is).
 */
export const JOB_PROBLEMS = [
  'empty',
  'files_missing',
  'drill_failed',
  'stale',
  'not_proven',
  'newest_unusual',
] as const;
export type JobProblem = (typeof JOB_PROBLEMS)[number];

/** The thresholds the health is decided by, served with every page so the UI words them. */
export interface JobHealthRules {
  stale_after_days: number;
  proven_within_days: number;
}

export const JOBS_PAGE_DEFAULT = 100;
export const JOBS_PAGE_MAX = 500;

/** The newest present snapshot of a job. */
export interface NewestSnapshot {
  name: string;
  size_bytes: number;
  mtime: string | null;
  stored_at: string | null;
  unusual_reason: string | null;
}

/** One job in `GET /api/jobs`. */
export interface JobSummary {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  health: JobHealth;
  problems: JobProblem[];
  newest: NewestSnapshot | null;
  /** When the oldest present snapshot was stored (a job never drilled is judged from it). */
  oldest_stored_at: string | null;
  /** Present snapshots (files missing are counted apart) and their bytes. */
  snapshot_count: number;
  total_bytes: number;
  missing_count: number;
  unusual_count: number;
  protected_count: number;
  /** Sizes of the newest present snapshots (at most `recent_sizes_max`), oldest first. */
  recent_sizes: number[];
  /** Positions in `recent_sizes` of unusual snapshots. */
  recent_unusual: number[];
  last_drill: DrillOutcome | null;
  /** What the Station knows of the job's instance. */
  instance: {
    key_fingerprint: string | null;
    advertised_url: string | null;
    last_seen_at: string | null;
  };
}

/** `GET /api/jobs`: hosts with a job that needs a look first, then by host, instance and job. */
export interface JobsPage {
  jobs: JobSummary[];
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
  /** Jobs that match the filters, on every page together. */
  total: number;
  /** Jobs of the whole Station by health (filters aside), for the page's header. */
  counts: Record<JobHealth, number>;
  rules: JobHealthRules;
  recent_sizes_max: number;
}

/** `GET /api/jobs/{scout_id}/{scout_instance_id}/{job_name}/snapshots`: newest first. */
export interface JobSnapshotsPage {
  /** Each as in the overview. */
  snapshots: OverviewSnapshot[];
}

/** `GET /api/instances`: every instance the Station knows (restore targets). */
export interface InstanceList {
  instances: { scout_id: string; scout_instance_id: string }[];
}
