import type { UploadDeps } from './types.ts';
import { withUploadLease } from './upload-lease.ts';

/**
 * Runs `work` while no other chunk or finalize of the upload runs; a request that waits too
 * long gets `busy()`.
 */
export type UploadLock = <T>(
  uploadId: string,
  work: () => Promise<T>,
  busy: () => Promise<Error>,
) => Promise<T>;

/**
 * Several Stations on one PostgreSQL: the write lease on the session row (upload-lease.ts).
 * This is the default.
 */
export function leaseLock(deps: Pick<UploadDeps, 'db' | 'clock'>): UploadLock {
  return (uploadId, work, busy) => withUploadLease(deps, uploadId, work, busy);
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
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(uploadId, tail);
    try {
      return await run;
    } finally {
      if (tails.get(uploadId) === tail) tails.delete(uploadId);
    }
  };
}
