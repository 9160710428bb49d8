/**
 * An operator's answers about stored snapshots on the Station: delete, protect, delete an
 * instance (src/station/routes/snapshots.ts, services/snapshots.ts), and the verification.
 */
import { z } from 'zod';
import type { SnapshotFileName } from './snapshot-file.ts';

/** `POST /api/snapshots/{scout}/{instance}/{job}/{filename}/protect`. */
export const ProtectRequestSchema = z.strictObject({
  protected: z.boolean({ error: 'protected must be true or false' }),
});
export type ProtectBody = z.input<typeof ProtectRequestSchema>;

/** `POST …/{filename}/restore`: another instance to restore on (both fields), or the original (neither). */
export const RestoreTargetSchema = z.strictObject({
  target_scout_id: z.string().optional(),
  target_instance_id: z.string().optional(),
});
export type RestoreTargetBody = z.input<typeof RestoreTargetSchema>;

/** `DELETE /api/instances/{scout}/{instance}?cleanup_missing=true|false`. */
export const RemoveInstanceQuerySchema = z.object({
  cleanup_missing: z
    .enum(['true', 'false'], { error: 'cleanup_missing must be true or false' })
    .optional()
    .transform((value) => value === 'true'),
});

/** `DELETE /api/snapshots/{scout}/{instance}/{job}/{filename}`. */
export interface SnapshotDeleted {
  status: 'deleted';
  filename: SnapshotFileName;
}

/** `POST …/{filename}/protect`. */
export interface SnapshotProtected {
  filename: SnapshotFileName;
  protected: boolean;
}

/** `DELETE /api/instances/{scout}/{instance}`. */
export interface InstanceDeleted {
  status: 'deleted';
  scout_id: string;
  scout_instance_id: string;
  deleted_files: number;
  removed_records: number;
}

export type VerifyProblem = 'checksum_mismatch' | 'missing' | 'unreadable' | 'unindexed';

export interface VerifyFailure {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  filename: SnapshotFileName;
  problem: VerifyProblem;
}

/** `GET`/`POST /api/admin/verify`: the last (or just finished) check of every stored file's SHA-256. */
export interface VerifyResult {
  status: 'never_run' | 'running' | 'ok' | 'failed';
  started_at: string | null;
  finished_at: string | null;
  checked: number;
  bytes: number;
  failures: VerifyFailure[];
}
