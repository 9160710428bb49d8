import type { Readable } from 'node:stream';
import { clock as stationClock } from '../../core/clock.ts';
import type { FinalizeRequest } from '../../shared/protocol/uploads.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import { chunk } from './chunk.ts';
import { createCopyIn } from './copy-in.ts';
import { finalize } from './finalize.ts';
import { initiate } from './initiate.ts';
import { applyRetention } from './retention.ts';
import { abortOrphans, createSweeper } from './sweep.ts';
import type { InitiateBody, JobKey, UploadDeps } from './types.ts';
import { leaseLock } from './upload-lock.ts';

export type { CopyIn, CopySource } from './copy-in.ts';
export type { InitiateBody, UploadEvents, UploadFacts } from './types.ts';
export { ABANDONED_AFTER_MS, RESERVATION_IDLE_MS } from './types.ts';
export { leaseLock, processLock } from './upload-lock.ts';

/**
 * The Station's upload protocol (initiate → chunks → finalize), the sweep of abandoned uploads
 * and retention. Snapshot bytes are reached only through `deps.store`; time only through
 * `deps.clock` (the Station's clock unless a test passes one); the chunks of one upload take
 * turns through `deps.lock` (the database lease unless PGlite's in-process queue is passed).
 */
export function createUploads(
  options: Omit<UploadDeps, 'clock' | 'lock'> & Partial<Pick<UploadDeps, 'clock' | 'lock'>>,
) {
  const clock = options.clock ?? stationClock;
  const deps: UploadDeps = { ...options, clock, lock: options.lock ?? leaseLock({ db: options.db, clock }) };
  const sweeper = createSweeper(deps);
  return {
    sweep: sweeper.sweep,
    initiate: (token: StationTokenRow, body: InitiateBody) => initiate(deps, sweeper.sweepIfDue, token, body),
    chunk: (token: StationTokenRow, uploadId: string, offset: number, body: Readable) =>
      chunk(deps, token, uploadId, offset, body),
    finalize: (token: StationTokenRow, uploadId: string, declared?: FinalizeRequest) =>
      finalize(deps, token, uploadId, declared),
    applyRetention: (ref: JobKey, protect: string) => applyRetention(deps, ref, protect),
    /** Start-up: staging areas of no live session go; sessions lose nothing they had. */
    reconcileStaging: () => abortOrphans(deps, true),
    /** Copies of another Station's snapshots (src/station/replication/). */
    copies: createCopyIn(deps),
  };
}

export type Uploads = ReturnType<typeof createUploads>;
