import { z } from 'zod';
import { isHttpUrl } from '../http-url.ts';
import {
  byteCountField,
  componentField,
  decimalQueryField,
  fingerprintField,
  idempotencyKeyField,
  sha256Field,
  timestampField,
} from './fields.ts';

/**
 * Streamed upload, a backupd extension of the upload protocol: an initiation with
 * `streamed: true` may leave out `archive_size_bytes` and `archive_sha256`, so a Scout can send
 * chunks while the archive is still being made; finalize then carries them
 * (`FinalizeRequestSchema`) and the Station checks them there (409 `size_mismatch` or
 * `checksum_mismatch`). A Station that does not know the extension answers such an initiation
 * 400 (the fields are missing), and the Scout falls back to staging the whole archive first.
 */
const initiateFields = z.object({
  scout_id: componentField('scout_id'),
  scout_instance_id: componentField('scout_instance_id'),
  job_name: componentField('job_name'),
  fingerprint: fingerprintField('fingerprint'),
  timestamp: timestampField('timestamp'),
  archive_format: z.literal('tar.zst', { error: 'archive_format must be "tar.zst"' }),
  archive_size_bytes: byteCountField('archive_size_bytes', 1).optional(),
  archive_sha256: sha256Field('archive_sha256').optional(),
  streamed: z.boolean({ error: 'streamed must be true or false' }).optional(),
  idempotency_key: idempotencyKeyField('idempotency_key'),
  encryption_key_fingerprint: fingerprintField('encryption_key_fingerprint').optional(),
  advertised_url: z
    .string()
    .refine(isHttpUrl, 'advertised_url must be an http:// or https:// address')
    .optional(),
});

/** Size and checksum are given together: both at initiation, or (streamed) both at finalize. */
function sizeAndChecksum(
  body: { archive_size_bytes?: number | undefined; archive_sha256?: string | undefined },
  ctx: z.RefinementCtx,
  when: string,
): void {
  for (const field of ['archive_size_bytes', 'archive_sha256'] as const) {
    if (body[field] === undefined)
      ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required ${when}` });
  }
}

/** `POST /backup/uploads/initiate`: what the Scout declares before sending bytes. */
export const InitiateRequestSchema = initiateFields.superRefine((body, ctx) => {
  const given = (body.archive_size_bytes !== undefined ? 1 : 0) + (body.archive_sha256 !== undefined ? 1 : 0);
  if (!body.streamed) sizeAndChecksum(body, ctx, '(or streamed: true, to give it at finalize)');
  else if (given === 1) sizeAndChecksum(body, ctx, 'with the other one (or leave both out)');
});
export type InitiateRequest = z.infer<typeof InitiateRequestSchema>;

/**
 * An upload session's `status`: `receiving` (initiated or resumed), `complete` (every byte
 * received), `stored` (finalized: the snapshot exists).
 */
export type UploadStatus = 'receiving' | 'complete' | 'stored';

export interface InitiateReply {
  upload_id: string;
  status: UploadStatus;
  next_offset: number;
  /** null while a streamed upload receives (its size comes at finalize). */
  archive_size_bytes: number | null;
  /** The session is a streamed upload (size and SHA-256 at finalize); absent on older Stations. */
  streamed?: boolean;
  recommended_chunk_size_bytes: number;
  /** The Station already holds these bytes for the job (status `stored`, nothing to send). */
  duplicate: boolean;
  stored_as?: string;
  pruned: string[];
}

/** `PUT /backup/uploads/{upload_id}/chunk?offset=N`: the query. */
export const ChunkQuerySchema = z.object({
  offset: decimalQueryField('offset', 'a nonnegative integer byte offset'),
});

export interface ChunkReply {
  upload_id: string;
  status: UploadStatus;
  next_offset: number;
  received_bytes?: number;
}

/**
 * `POST /backup/uploads/{upload_id}/finalize` body: required for a streamed upload (what was
 * sent: the Station checks it against what it received), optional otherwise (then checked
 * against what initiation declared). An empty body is `{}`.
 */
export const FinalizeRequestSchema = z
  .object({
    archive_size_bytes: byteCountField('archive_size_bytes', 1).optional(),
    archive_sha256: sha256Field('archive_sha256').optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.archive_size_bytes === undefined) !== (body.archive_sha256 === undefined))
      sizeAndChecksum(body, ctx, 'with the other one');
  });
export type FinalizeRequest = z.infer<typeof FinalizeRequestSchema>;

export interface FinalizeReply {
  status: 'stored';
  stored_as: string;
  pruned: string[];
  duplicate: boolean;
  unusual?: boolean;
  unusual_reason?: string;
}

/**
 * The `detail` of a 409 the uploader acts on: `offset_mismatch` (resume at `next_offset`),
 * `incomplete` (send from `next_offset`), `checksum_mismatch` (`next_offset` 0: start over),
 * `size_mismatch` (streamed: finalize named another size than was received; `next_offset` 0
 * when more was received and discarded, else the bytes received so far).
 */
export interface ResumeDetail {
  status: 'offset_mismatch' | 'incomplete' | 'checksum_mismatch' | 'size_mismatch';
  next_offset: number;
  message: string;
}
