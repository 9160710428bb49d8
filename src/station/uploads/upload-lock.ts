import { createLeases } from '../services/leases.ts';
import type { UploadDeps } from './types.ts';
import { type UploadHold, unguarded, withUploadLease } from './upload-lease.ts';

/**
 * Runs `work` while no other chunk or finalize of the upload runs; a request that waits too
 * long gets `busy()`. `work` checks its hold before it writes bytes or saves state.
 */
export type UploadLock = <T>(
  uploadId: string,
  work: (hold: UploadHold) => Promise<T>,
  busy: () => Promise<Error>,
) => Promise<T>;

/**
 * Several Stations on one PostgreSQL: the upload's write lease in the Station's leases
 * (upload-lease.ts). This is the default.
 */
export function leaseLock(deps: Pick<UploadDeps, 'db' | 'clock'>): UploadLock {
  const leases = createLeases(deps.db);
  return (uploadId, work, busy) => withUploadLease({ leases, clock: deps.clock }, uploadId, work, busy);
}

/**
 * PGlite: the database lives inside this one process, so no other Station can write to its
 * uploads, and a queue per upload in memory is enough. It spares each chunk the lease's two
 * commits, each an fsync of PGlite's files (measured: 0.4 CPU-seconds per received GiB, and
 * seconds of waiting while the disk is busy with the staged bytes).
 */
export function processLock(): UploadLock {
  const tails = new Map<string, Promise<unknown>>();
  return async (uploadId, work) => {
    const previous = tails.get(uploadId) ?? Promise.resolve();
    const next = () => work(unguarded);
    const run = previous.then(next, next);
    const tail = run.catch(() => undefined);
    tails.set(uploadId, tail);
    try {
      return await run;
    } finally {
      if (tails.get(uploadId) === tail) tails.delete(uploadId);
    }
  };
}
