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

/** `POST /backup/uploads/initiate`: what the Scout declares before sending bytes. */
export const InitiateRequestSchema = z.object({
  scout_id: componentField('scout_id'),
  scout_instance_id: componentField('scout_instance_id'),
  job_name: componentField('job_name'),
  fingerprint: fingerprintField('fingerprint'),
  timestamp: timestampField('timestamp'),
  archive_format: z.literal('tar.zst', { error: 'archive_format must be "tar.zst"' }),
  archive_size_bytes: byteCountField('archive_size_bytes', 1),
  archive_sha256: sha256Field('archive_sha256'),
  idempotency_key: idempotencyKeyField('idempotency_key'),
  encryption_key_fingerprint: fingerprintField('encryption_key_fingerprint').optional(),
  advertised_url: z
    .string()
    .refine(isHttpUrl, 'advertised_url must be an http:// or https:// address')
    .optional(),
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
  archive_size_bytes: number;
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
 * `incomplete` (send from `next_offset`), `checksum_mismatch` (`next_offset` 0: start over).
 */
export interface ResumeDetail {
  status: 'offset_mismatch' | 'incomplete' | 'checksum_mismatch';
  next_offset: number;
  message: string;
}
