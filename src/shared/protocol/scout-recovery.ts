/**
 * The Scout's restores and key: `/api/recovery/*` (src/scout/routes/recovery.ts) and
 * `/api/encryption-key` (src/scout/routes/encryption-key.ts).
 */
import { z } from 'zod';
import type { ListedSnapshot, RestoreProblemView } from './recovery.ts';

/** `GET /api/recovery/snapshots?relative_path=…`: the query. */
export const JobSnapshotsQuerySchema = z.object({
  relative_path: z.string({ error: 'relative_path is required (the job folder, relative to SCAN_ROOT)' }),
});

/**
 * `POST /api/recovery/preview` and `…/restore`: the job, which snapshot (the newest, the newest
 * with a fingerprint, or a file), which of its entries (`paths`) and where (`destination`).
 */
export const RestoreBodySchema = z.object({
  relative_path: z.string({ error: 'relative_path is required' }),
  fingerprint: z.string().optional(),
  filename: z.string().optional(),
  paths: z
    .array(z.string({ error: 'paths: each must be a string' }), { error: 'paths must be a list of paths' })
    .optional(),
  destination: z.string({ error: 'destination must be a string' }).optional(),
});
export type RestoreBody = z.input<typeof RestoreBodySchema>;

/** `POST /api/encryption-key/confirm`: the fingerprint of the key file someone keeps. */
export const ConfirmKeySchema = z.object({
  fingerprint: z
    .string({ error: 'fingerprint is required: the 64 hex digits of the key file\'s "# fingerprint:" line' })
    .max(200, 'fingerprint is too long'),
});
export type ConfirmKeyBody = z.input<typeof ConfirmKeySchema>;

/** `GET /api/recovery/snapshots?relative_path=…`: the job's snapshots on the Station, newest first. */
export interface JobSnapshotList {
  job_name: string;
  snapshots: ListedSnapshot[];
}

/** Another operation runs: nothing was done. */
export interface AlreadyRunning {
  status: 'already_running';
}

/** `POST /api/recovery/preview`: what a restore would do (nothing is written). */
export interface RestorePreview {
  status?: undefined;
  snapshot: string;
  add: string[];
  replace: string[];
  unchanged: string[];
  add_count: number;
  replace_count: number;
  unchanged_count: number;
  bytes: number;
  problem_count: number;
  problems: RestoreProblemView[];
}

/** `POST /api/recovery/restore`. */
export interface RestoreOutcome {
  status: 'restored';
  snapshot: string;
  added: number;
  replaced: number;
  unchanged: number;
  destination: string;
  bytes: number;
  problem_count: number;
  problems: RestoreProblemView[];
}

/** `GET /api/encryption-key`: the Scout key (an admin's; fetching it counts as keeping a copy). */
export interface ScoutKeyView {
  fingerprint: string;
  key_base64: string;
  age_identity: string;
  age_recipient: string;
}

/** `POST /api/encryption-key/rotate`. */
export interface RotatedKey extends ScoutKeyView {
  new_fingerprint: string;
}

/** `POST /api/encryption-key/confirm`. */
export interface KeyConfirmed {
  key_saved_at: string | null;
}
