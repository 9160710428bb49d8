import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../../core/auth/secrets.ts';
import type { Clock } from '../../core/clock.ts';
import type { HeldLease, Leases } from '../services/leases.ts';
import { letGo } from '../storage/body-pieces.ts';
import { offerReads, socketReadsOf } from '../storage/socket-reads.ts';

/** How long a lease holds without renewal: a Station that died mid-chunk blocks no longer. */
export const LEASE_MS = 60_000;
/** How long a request waits for the lease before it answers 409. */
const WAIT_MS = 120_000;
/**
 * A holder that has not confirmed its lease for this long confirms it before it passes on
 * more bytes: the lease (LEASE_MS from its last confirmation, on the database's clock) is then
 * surely still its own, also after the process stood still (a pause, a swap storm, SIGSTOP).
 */
const CONFIRM_AFTER_MS = LEASE_MS / 2;

/** The lease of the upload was lost: it lapsed and another request took it. */
export class LeaseLost extends Error {
  constructor() {
    super("another request took over this upload's lease");
  }
}

/** What the request holding an upload's lease uses before it writes or saves anything. */
export interface UploadHold {
  /** The chunk's body as the store should read it: its next piece fails with LeaseLost once the lease is gone. */
  guard(body: Readable): Readable;
  /** Renews the lease, or throws LeaseLost when it is no longer this request's: call before saving state. */
  confirm(): Promise<void>;
}

/** The hold of a lock that cannot be taken away (one process: upload-lock.ts processLock). */
export const unguarded: UploadHold = { guard: (body) => body, confirm: async () => {} };

async function takeWaiting(
  leases: Leases,
  name: string,
  holder: string,
  busy: () => Promise<Error>,
): Promise<HeldLease> {
  const waitUntil = Date.now() + WAIT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    const lease = await leases.take(name, LEASE_MS, holder);
    if (lease) return lease;
    if (Date.now() > waitUntil) throw await busy();
    await sleep(pause);
  }
}

/**
 * Runs `work` while holding the upload's write lease (`upload:<id>` in the Station's leases,
 * src/station/services/leases.ts), so that the chunks and the finalize of one upload run one at
 * a time across every Station on the database.
 *
 * Why a lease row and not an advisory lock: `pg_advisory_xact_lock` lives as long as a
 * transaction, and holding a drizzle transaction open across a chunk streamed for minutes ties
 * up a pooled connection per upload; a session-level `pg_try_advisory_lock` needs a reserved
 * connection, which PGlite does not have. The lease is on the database's clock (a Station whose
 * clock runs ahead cannot think another's lease has lapsed), is renewed while the work runs,
 * and lapses on its own when a Station dies holding it. A second request waits for it
 * (polling), and gets `busy()` after WAIT_MS. A holder whose lease was taken (it stood still
 * past LEASE_MS) stops: the body it reads fails (`hold.guard`), `hold.confirm` throws before any
 * state is saved, and the request answers `busy()` (offset_mismatch with the bytes the store
 * holds). A Station on PGlite, alone with its database by nature, uses an in-memory queue
 * instead (upload-lock.ts).
 */
export async function withUploadLease<T>(
  deps: { leases: Leases; clock: Clock },
  uploadId: string,
  work: (hold: UploadHold) => Promise<T>,
  busy: () => Promise<Error>,
): Promise<T> {
  const { leases, clock } = deps;
  let confirmedAt = clock.now();
  const lease = await takeWaiting(leases, `upload:${uploadId}`, `${leases.holder}/${newId()}`, busy);
  let lost = false;

  async function confirm(): Promise<void> {
    if (lost) throw new LeaseLost();
    const asked = clock.now();
    if (!(await lease.renew())) {
      lost = true;
      throw new LeaseLost();
    }
    confirmedAt = asked;
  }

  /** Before a piece of the body is passed on: throws once the lease is lost, confirms it when due. */
  function beforePiece(): Promise<void> | undefined {
    if (lost) throw new LeaseLost();
    return clock.now() - confirmedAt >= CONFIRM_AFTER_MS ? confirm() : undefined;
  }

  function guard(body: Readable): Readable {
    // The body's own iterator, kept open on return: a lost lease answers (409) and drops the
    // rest of the body; any other early end (a chunk too long) drops the request as before.
    const pieces = body.iterator({ destroyOnReturn: false });
    const guarded = Readable.from(
      (async function* () {
        try {
          for await (const piece of pieces) {
            await beforePiece();
            yield piece as Buffer;
          }
        } finally {
          if (lost) body.resume();
          else if (!body.readableEnded) letGo(body);
        }
      })(),
      { objectMode: false },
    );
    // Read from its socket instead (socket-reads.ts), the same check comes before each read is taken.
    const reads = socketReadsOf(body);
    if (reads) {
      offerReads(guarded, (target) =>
        reads({
          room: () => target.room(),
          took: (n) => {
            const due = beforePiece();
            return due ? due.then(() => target.took(n)) : target.took(n);
          },
        }),
      );
    }
    return guarded;
  }

  const renewal = setInterval(() => void confirm().catch(() => {}), LEASE_MS / 3);
  renewal.unref();
  try {
    return await work({ guard, confirm });
  } catch (error) {
    if (lost) throw await busy();
    throw error;
  } finally {
    clearInterval(renewal);
    if (!lost) await lease.release();
  }
}
