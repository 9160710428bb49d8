import { access } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from '../../core/log.ts';
import type { InitiateRequest, ResumeDetail } from '../../shared/protocol/uploads.ts';
import type { SkippedSummary } from '../jobs/skipped.ts';
import { type FinalizeReply, type StationClient, StationError } from './station-client.ts';

const log = logger.child({ mod: 'scout/upload' });

const MIN_CHUNK = 256 * 1024;
const START_CHUNK = 4 * 1024 * 1024;
const ATTEMPTS = 4;

/** An archive waiting in the Scout's staging folder, with what initiation declares. */
export interface StagedArchive {
  file: string;
  size: number;
  sha256: string;
  fingerprint: string;
  timestamp: string;
  idempotency_key: string;
  key_fingerprint: string;
  /**
   * What change detection keeps once this archive is stored, when it differs from
   * `fingerprint`: without the entries archived incomplete (src/scout/archive/tar-writer.ts),
   * so the next cycle backs them up again.
   */
  retry_fingerprint?: string;
  /**
   * For a job with `change_detection: mtimes`: what change detection keeps instead, the same
   * entries fingerprinted with their modification times.
   */
  change_fingerprint?: string;
  /** What this archive left out (src/scout/jobs/skipped.ts); absent or null when nothing. */
  skipped?: SkippedSummary | null;
}

export interface UploadTarget {
  scoutId: string;
  instanceId: string;
  jobName: string;
  advertisedUrl: string | undefined;
}

/**
 * Uploads a staged archive: initiation (resuming by idempotency key), chunks from
 * `next_offset` with a chunk size that adapts to the link, finalize. Transient failures
 * (unreachable, 5xx, 429) are retried with backoff honouring Retry-After; an offset
 * conflict resumes where the Station says; a checksum mismatch starts over once.
 */
export async function uploadStaged(options: {
  client: StationClient;
  staged: StagedArchive;
  target: UploadTarget;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}): Promise<FinalizeReply> {
  const { client, staged, target, signal } = options;
  const meta: InitiateRequest = {
    scout_id: target.scoutId,
    scout_instance_id: target.instanceId,
    job_name: target.jobName,
    fingerprint: staged.fingerprint,
    timestamp: staged.timestamp,
    archive_format: 'tar.zst',
    archive_size_bytes: staged.size,
    archive_sha256: staged.sha256,
    idempotency_key: staged.idempotency_key,
    encryption_key_fingerprint: staged.key_fingerprint,
    ...(target.advertisedUrl ? { advertised_url: target.advertisedUrl } : {}),
  };
  let failures = 0;
  let restarts = 0;
  let chunkSize = 0;
  await access(staged.file).catch(() => {
    throw new Error(`the staged archive ${staged.file} is gone; clear-staged, then force-send`);
  });
  for (;;) {
    try {
      const started = await client.initiate(meta, signal);
      if (started.status === 'stored') {
        return {
          status: 'stored',
          stored_as: started.stored_as ?? '',
          pruned: started.pruned,
          duplicate: started.duplicate,
        };
      }
      let offset = started.next_offset;
      // The Station's chunk size (the S3 store's part size), or a power-of-two fraction of it
      // on a slow link; every chunk ends on a multiple of the size in use.
      const ceiling = Math.max(MIN_CHUNK, started.recommended_chunk_size_bytes || START_CHUNK);
      if (chunkSize === 0 || chunkSize > ceiling) chunkSize = ceiling;
      while (offset < staged.size) {
        const length = Math.min(chunkSize - (offset % chunkSize), staged.size - offset);
        const t = performance.now();
        try {
          offset = (await client.chunk(started.upload_id, staged.file, offset, length, signal)).next_offset;
        } catch (error) {
          if (error instanceof StationError && error.code === 'offset_mismatch') {
            offset = (error.detail as ResumeDetail).next_offset;
            continue;
          }
          throw error;
        }
        // Aim for chunks of a few seconds: the full size on a fast link, smaller on a slow one.
        const seconds = (performance.now() - t) / 1000;
        if (seconds < 1 && chunkSize * 2 <= ceiling) chunkSize *= 2;
        else if (seconds > 8 && chunkSize % 2 === 0 && chunkSize / 2 >= MIN_CHUNK) chunkSize /= 2;
        failures = 0;
        options.onProgress?.(offset, staged.size);
      }
      return await client.finalize(started.upload_id, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!(error instanceof StationError)) throw error;
      if (error.code === 'checksum_mismatch' && restarts === 0) {
        restarts += 1;
        log.warn({ job: target.jobName }, 'Station saw a checksum mismatch; sending the archive again');
        continue;
      }
      if (!error.transient || failures + 1 >= ATTEMPTS) throw error;
      failures += 1;
      const wait = Math.min(30, error.retryAfterSeconds ?? 2 ** (failures - 1));
      log.warn({ job: target.jobName, status: error.status, wait }, 'upload interrupted; retrying');
      await sleep(wait * 1000, undefined, { signal });
    }
  }
}
