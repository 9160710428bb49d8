/**
 * Restore requests as the Station's `/api` shows them (src/station/services/restore-requests.ts)
 * and as a Scout's `/api/restore-requests` decides them (src/scout/restore/request-decisions.ts).
 * The receiving instance's `/backup/*` view is recovery.ts's RestoreRequestView.
 */
import { z } from 'zod';
import type { RestoreProblemView, RestoreRequestView } from './recovery.ts';

/** A Scout's `POST /api/restore-requests/decision`: accept (into `relative_path`, with a key) or reject. */
export const RestoreDecisionSchema = z.object({
  id: z.string({ error: 'id is required' }).min(1, 'id is required'),
  decision: z.enum(['accept', 'reject'], { error: 'decision must be accept or reject' }),
  relative_path: z.string().optional(),
  encryption_key: z.string().optional(),
});
export type RestoreDecisionBody = z.input<typeof RestoreDecisionSchema>;

/** A Scout's `POST /backup/restore-notifications`: the Station's hint that a request waits. */
export const RestoreHintSchema = z.object({ id: z.string({ error: 'id is required' }).min(1).max(100) });

/** A restore request with both ends, as the Station's `GET /api/restore-requests` lists it. */
export interface RestoreRequestRecord extends RestoreRequestView {
  target_scout_id: string;
  target_instance_id: string;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

export interface RestoreRequestRecordList {
  requests: RestoreRequestRecord[];
}

/** `POST /backup/recovery/{scout}/{instance}/requests/{id}`: the request as it is now. */
export interface RestoreRequestReply {
  request: RestoreRequestRecord;
}

/** `POST /api/snapshots/…/{filename}/restore`: the request, and whether the target Scout was told. */
export interface RestoreRequestCreated extends RestoreRequestReply {
  notified: boolean;
}

/** A Scout's `POST /api/restore-requests/decision`: rejected, or accepted and restored. */
export interface RestoreDecided {
  status: 'rejected' | 'restored' | 'already_running';
  id?: string;
  snapshot?: string;
  relative_path?: string;
  added?: number;
  replaced?: number;
  bytes?: number;
  problem_count?: number;
  problems?: RestoreProblemView[];
}
