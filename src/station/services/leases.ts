import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { and, eq, sql } from 'drizzle-orm';
import { logger } from '../../core/log.ts';
import type { StationDb } from '../db/open.ts';
import { leases } from '../db/station-tables.ts';

const log = logger.child({ mod: 'station/leases' });

/** The database's clock in ms: Stations on several machines agree on it, whatever their own clocks say. */
const dbNow = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export const DEFAULT_LEASE_MS = 5 * 60 * 1000;

export type LeaseOutcome<T> = { ran: true; value: T } | { ran: false; holder: string };

/** One holding of a lease, by one holder. */
export interface HeldLease {
  readonly name: string;
  readonly holder: string;
  /**
   * Extends the lease by its TTL (on the database's clock) while it is still this holder's;
   * false when it is not: it lapsed and another holder took it (and perhaps released it).
   */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * Station-wide jobs (the upload sweep, a verification run) take a lease row in the database
 * first, so of several Stations on one PostgreSQL only one runs a job at a time; each upload's
 * chunks and finalize take one too (uploads/upload-lease.ts, one holder per request). A lease
 * is taken with one conditional upsert (free, expired, or already ours), renewed while the job
 * runs, and released when it ends; a Station that dies mid-job leaves a lease that expires
 * after `ttlMs`, and the next Station takes it then. Every time is the database's
 * (`clock_timestamp()`), never a Station's own clock: a Station whose clock runs ahead must not
 * think another's lease has lapsed (issue #23 item 6). With PGlite (one process) every
 * Station-wide lease is free, and nothing changes.
 */
export function createLeases(
  db: StationDb,
  holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
) {
  /** Takes the lease `name` for `by` (this Station unless given); null while another holds it. */
  async function take(name: string, ttlMs: number, by = holder): Promise<HeldLease | null> {
    const rows = await db
      .insert(leases)
      .values({ name, holder: by, until: sql`${dbNow} + ${ttlMs}` })
      .onConflictDoUpdate({
        target: leases.name,
        set: { holder: by, until: sql`${dbNow} + ${ttlMs}` },
        setWhere: sql`${leases.until} <= ${dbNow} OR ${leases.holder} = ${by}`,
      })
      .returning({ holder: leases.holder });
    if (rows.length === 0) return null;
    const mine = and(eq(leases.name, name), eq(leases.holder, by));
    return {
      name,
      holder: by,
      async renew() {
        const renewed = await db
          .update(leases)
          .set({ until: sql`${dbNow} + ${ttlMs}` })
          .where(mine)
          .returning({ name: leases.name });
        return renewed.length > 0;
      },
      async release() {
        await db.delete(leases).where(mine);
      },
    };
  }

  async function acquire(name: string, ttlMs: number): Promise<boolean> {
    return (await take(name, ttlMs)) !== null;
  }

  /**
   * A holder on this machine whose process is gone (SIGKILL, a crash) cannot renew its lease:
   * its lease is freed at once instead of after its time-to-live.
   */
  async function freeIfDead(name: string): Promise<boolean> {
    const current = await holderOf(name);
    const [host, pid] = current?.split(':') ?? [];
    if (!current || host !== hostname() || !pid || Number(pid) === process.pid) return false;
    try {
      process.kill(Number(pid), 0);
      return false;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') return false;
    }
    log.info({ lease: name, holder: current }, 'freeing the lease of a process that is gone');
    await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, current)));
    return true;
  }

  async function holderOf(name: string): Promise<string | null> {
    const [row] = await db
      .select({ holder: leases.holder })
      .from(leases)
      .where(and(eq(leases.name, name), sql`${leases.until} > ${dbNow}`));
    return row?.holder ?? null;
  }

  return {
    holder,
    take,
    acquire,
    holderOf,
    freeIfDead,
    /**
     * Start-up with PGlite: the database belongs to this one process (the data-dir lock), so a
     * lease left in it was held by a process that died (SIGKILL) and is free now.
     */
    async releaseLeftovers(): Promise<void> {
      await db.delete(leases);
    },

    /**
     * Runs `job` under the lease `name` when this Station can take it (renewing it every
     * third of `ttlMs` while the job runs); else does not run it and says who holds it.
     */
    async exclusive<T>(
      name: string,
      job: () => Promise<T>,
      ttlMs = DEFAULT_LEASE_MS,
    ): Promise<LeaseOutcome<T>> {
      let lease = await take(name, ttlMs);
      if (!lease && (await freeIfDead(name))) lease = await take(name, ttlMs);
      if (!lease) return { ran: false, holder: (await holderOf(name)) ?? 'another Station' };
      const renewer = setInterval(() => {
        lease
          .renew()
          .then((held) => {
            if (!held) log.warn({ lease: name }, 'the lease lapsed and another Station took it');
          })
          .catch((err: unknown) => log.warn({ err, lease: name }, 'renewing a lease failed'));
      }, ttlMs / 3);
      renewer.unref();
      try {
        return { ran: true, value: await job() };
      } finally {
        clearInterval(renewer);
        await lease
          .release()
          .catch((err: unknown) => log.warn({ err, lease: name }, 'releasing a lease failed'));
      }
    },
  };
}

export type Leases = ReturnType<typeof createLeases>;
