import { access } from 'node:fs/promises';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { InitiateRequest, ResumeDetail } from '../../shared/protocol/uploads.ts';
import type { SkippedSummary } from '../jobs/skipped.ts';
import { type ArchiveEnd, type ArchiveSource, stagedSource } from './archive-source.ts';
import {
  type FinalizeReply,
  type InitiateReply,
  type StationClient,
  StationError,
} from './station-client.ts';

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
  /**
   * The upload began while the archive was written (a streamed upload): resuming it initiates
   * as one again, so the Station finds the session by its idempotency key.
   */
  streamed?: boolean;
}

export interface UploadTarget {
  scoutId: string;
  instanceId: string;
  jobName: string;
  advertisedUrl: string | undefined;
}

/** Stations (by address) that refused a streamed initiation in this process: older releases. */
const refusesStreamed = new Set<string>();

/** Whether to try a streamed upload with this Station (not known to refuse it). */
export const mayStream = (client: StationClient): boolean => !refusesStreamed.has(client.baseUrl);

/** What every initiation of one archive declares (size and checksum come with the archive). */
export type Announcement = Omit<InitiateRequest, 'archive_size_bytes' | 'archive_sha256' | 'streamed'>;

export function announcement(
  staged: Pick<StagedArchive, 'fingerprint' | 'timestamp' | 'idempotency_key' | 'key_fingerprint'>,
  target: UploadTarget,
): Announcement {
  return {
    scout_id: target.scoutId,
    scout_instance_id: target.instanceId,
    job_name: target.jobName,
    fingerprint: staged.fingerprint,
    timestamp: staged.timestamp,
    archive_format: 'tar.zst',
    idempotency_key: staged.idempotency_key,
    encryption_key_fingerprint: staged.key_fingerprint,
    ...(target.advertisedUrl ? { advertised_url: target.advertisedUrl } : {}),
  };
}

/**
 * Uploads a staged archive: initiation (resuming by idempotency key), chunks from
 * `next_offset` with a chunk size that adapts to the link, finalize. An archive staged by a
 * streamed upload (`streamed`) resumes it as one.
 */
export async function uploadStaged(options: {
  client: StationClient;
  staged: StagedArchive;
  target: UploadTarget;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}): Promise<FinalizeReply> {
  const { staged } = options;
  await access(staged.file).catch(() => {
    throw new Error(`the staged archive ${staged.file} is gone; clear-staged, then force-send`);
  });
  return sendArchive({
    ...options,
    announce: announcement(staged, options.target),
    source: stagedSource(staged.file, { size: staged.size, sha256: staged.sha256 }),
    streamed: staged.streamed === true,
  });
}

/**
 * Sends an archive, complete or still growing (archive-source.ts). A streamed upload
 * (src/shared/protocol/uploads.ts) initiates without size and checksum, sends each chunk once
 * its bytes are written and gives both at finalize; a Station that refuses it (400: an older
 * release) gets the archive once it is complete, as a plain upload under the same key.
 * Transient failures (unreachable, 5xx, 429) are retried with backoff honouring Retry-After;
 * an offset conflict resumes where the Station says; a checksum or size mismatch starts over
 * once.
 */
export async function sendArchive(options: {
  client: StationClient;
  announce: Announcement;
  source: ArchiveSource;
  streamed: boolean;
  target: UploadTarget;
  signal?: AbortSignal | undefined;
  onProgress?: ((done: number, total: number) => void) | undefined;
}): Promise<FinalizeReply> {
  const { client, source, target, signal } = options;
  let streamed = options.streamed && mayStream(client);
  let announce = options.announce;
  let failures = 0;
  let restarts = 0;
  let chunkSize = 0;
  /** The archive's end; a plain upload waits for it before initiating. */
  const ended = async (): Promise<ArchiveEnd> => {
    for (let end = source.end(); ; end = source.end()) {
      if (end) return end;
      await source.more(signal);
    }
  };
  const initiate = async () => {
    if (streamed) return client.initiate({ ...announce, streamed: true }, signal);
    const end = await ended();
    const meta = { ...announce, archive_size_bytes: end.size, archive_sha256: end.sha256 };
    return client.initiate(meta, signal);
  };
  for (;;) {
    try {
      let started: InitiateReply;
      try {
        started = await initiate();
      } catch (error) {
        if (!(streamed && error instanceof StationError && error.status === 400)) throw error;
        refusesStreamed.add(client.baseUrl);
        streamed = false;
        log.info(
          { job: target.jobName, detail: error.message },
          'the Station refused a streamed upload (an older release?); sending the archive once it is staged',
        );
        continue;
      }
      if (started.status === 'stored') {
        return {
          status: 'stored',
          stored_as: started.stored_as ?? '',
          pruned: started.pruned,
          duplicate: started.duplicate,
        };
      }
      let offset = started.next_offset;
      // The Station's chunk size (on S3 a whole number of the store's parts), or a power-of-two fraction of it
      // on a slow link; every chunk ends on a multiple of the size in use, so a growing archive
      // is sent in whole chunks as its bytes are written.
      const ceiling = Math.max(MIN_CHUNK, started.recommended_chunk_size_bytes || START_CHUNK);
      if (chunkSize === 0 || chunkSize > ceiling) chunkSize = ceiling;
      for (let end = source.end(); !end || offset < end.size; end = source.end()) {
        signal?.throwIfAborted();
        const boundary = offset + chunkSize - (offset % chunkSize);
        const until = end ? Math.min(boundary, end.size) : boundary;
        if (source.available() < until) {
          await source.more(signal);
          continue;
        }
        const t = performance.now();
        try {
          const reply = await client.chunk(
            started.upload_id,
            await source.file(),
            offset,
            until - offset,
            signal,
          );
          offset = reply.next_offset;
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
        options.onProgress?.(offset, source.end()?.size ?? source.available());
      }
      const end = await ended();
      const declared = streamed ? { archive_size_bytes: end.size, archive_sha256: end.sha256 } : undefined;
      return await client.finalize(started.upload_id, declared, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!(error instanceof StationError)) throw error;
      if (streamed && error.status === 413) {
        // Larger than the Station planned for (or than it takes): once the archive is staged,
        // its declared size decides, as a plain upload under a key of its own.
        streamed = false;
        announce = { ...announce, idempotency_key: `${announce.idempotency_key}-plain` };
        log.warn(
          { job: target.jobName },
          'the streamed upload was too large for the Station; declaring the size',
        );
        continue;
      }
      const mismatch = error.code === 'checksum_mismatch' || error.code === 'size_mismatch';
      if (mismatch && restarts === 0) {
        restarts += 1;
        log.warn(
          { job: target.jobName, code: error.code },
          'Station saw a mismatch; sending the archive again',
        );
        continue;
      }
      if (!error.transient || failures + 1 >= ATTEMPTS) throw error;
      failures += 1;
      const wait = Math.min(30, error.retryAfterSeconds ?? 2 ** (failures - 1));
      log.warn({ job: target.jobName, status: error.status, wait }, 'upload interrupted; retrying');
      // On the clock: a test moves it past the wait instead of sitting it out (README, Development).
      await clock.sleep(wait * 1000, signal);
    }
  }
}
