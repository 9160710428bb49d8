import { z } from 'zod';
import { fingerprintField } from './fields.ts';

/** A stored snapshot of a job as `GET …/snapshots` lists it (newest first). */
export interface ListedSnapshot {
  filename: string;
  timestamp: string;
  size_bytes: number;
  fingerprint: string;
}

export interface SnapshotList {
  snapshots: ListedSnapshot[];
}

/** `GET …/{scout}/{instance}/jobs`: one instance's jobs with stored snapshots, by name. */
export interface ListedJob {
  job_name: string;
  snapshot_count: number;
  /** The newest snapshot's time (as ListedSnapshot's `timestamp`) and size. */
  newest_timestamp: string;
  newest_size_bytes: number;
}

export interface JobList {
  jobs: ListedJob[];
}

/** Which snapshot a download asks for: an exact file, the newest with a fingerprint, or the latest. */
export interface SnapshotChoice {
  fingerprint?: string | undefined;
  filename?: string | undefined;
}

/** `GET …/{job}/by-fingerprint?fp=…`: the query. */
export const ByFingerprintQuerySchema = z.object({ fp: fingerprintField('fp') });

/**
 * A restore request's `status`: `pending` → `accepted` or `rejected`; `accepted` → `completed`
 * or `rejected`; one hour after creation an unfinished request reads `expired`.
 */
export type RestoreRequestStatus = 'pending' | 'accepted' | 'rejected' | 'completed' | 'expired';

/** A restore request as the receiving instance's list gives it. */
export interface RestoreRequestView {
  id: string;
  job_name: string;
  filename: string;
  status: RestoreRequestStatus;
  source_scout_id: string;
  source_instance_id: string;
  created_at?: string;
  expires_at?: string;
}

export interface RestoreRequestList {
  requests: RestoreRequestView[];
}

/** `POST …/requests/{id}`: what the Scout reports. */
export const RequestReportSchema = z.object({
  status: z.enum(['accepted', 'rejected', 'completed'], {
    error: 'status must be accepted, rejected or completed',
  }),
});
export type RequestReport = z.infer<typeof RequestReportSchema>['status'];

/** One entry a Scout's restore left out or restored in part; `path` escaped as src/shared/byte-names.ts says. */
export interface RestoreProblemView {
  path: string;
  message: string;
}

/** Problems a restore answer lists (its `problem_count` counts them all). */
export const ANSWERED_PROBLEMS = 20;
