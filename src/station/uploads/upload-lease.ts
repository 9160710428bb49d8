import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import { newId } from '../../core/auth/secrets.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { UploadDeps } from './types.ts';

/** How long a lease holds without renewal: a Station that died mid-chunk blocks no longer. */
export const LEASE_MS = 60_000;
/** How long a request waits for the lease before it answers 409. */
const WAIT_MS = 120_000;

/**
 * Runs `work` while holding the upload's write lease, so that the chunks and the finalize of
 * one upload run one at a time across every Station on the database.
 *
 * Why a lease row and not an advisory lock: `pg_advisory_xact_lock` lives as long as a
 * transaction, and holding a drizzle transaction open across a chunk streamed for minutes ties
 * up a pooled connection per upload; a session-level `pg_try_advisory_lock` needs a reserved
 * connection, which PGlite does not have. The lease (`lock_owner`, `lock_until` on the session
 * row, taken by a conditional UPDATE) works alike on PGlite and PostgreSQL, is renewed while
 * the work runs, and lapses on its own when a Station dies holding it. A second request waits
 * for it (polling), and gets `busy()` after WAIT_MS. A Station on PGlite, alone with its
 * database by nature, uses an in-memory queue instead (upload-lock.ts).
 */
export async function withUploadLease<T>(
  deps: Pick<UploadDeps, 'db' | 'clock'>,
  uploadId: string,
  work: () => Promise<T>,
  busy: () => Promise<Error>,
): Promise<T> {
  const { db, clock } = deps;
  const owner = newId();
  const waitUntil = Date.now() + WAIT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    const now = clock.now();
    const taken = await db
      .update(uploadSessions)
      .set({ lockOwner: owner, lockUntil: now + LEASE_MS })
      .where(
        and(
          eq(uploadSessions.uploadId, uploadId),
          or(isNull(uploadSessions.lockOwner), lt(uploadSessions.lockUntil, now)),
        ),
      )
      .returning({ uploadId: uploadSessions.uploadId });
    if (taken.length > 0) break;
    const [exists] = await db
      .select({ uploadId: uploadSessions.uploadId })
      .from(uploadSessions)
      .where(eq(uploadSessions.uploadId, uploadId));
    // No session: the work itself answers (404).
    if (!exists) return work();
    if (Date.now() > waitUntil) throw await busy();
    await sleep(pause);
  }
  const mine = and(eq(uploadSessions.uploadId, uploadId), eq(uploadSessions.lockOwner, owner));
  const renewal = setInterval(() => {
    db.update(uploadSessions)
      .set({ lockUntil: clock.now() + LEASE_MS })
      .where(mine)
      .catch(() => {});
  }, LEASE_MS / 3);
  renewal.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await db.update(uploadSessions).set({ lockOwner: null, lockUntil: null }).where(mine);
  }
}
