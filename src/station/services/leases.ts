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

/**
 * Station-wide jobs (the upload sweep, a verification run) take a lease row in the database
 * first, so of several Stations on one PostgreSQL only one runs a job at a time. A lease is
 * taken with one conditional upsert (free, expired, or already ours), renewed while the job
 * runs, and released when it ends; a Station that dies mid-job leaves a lease that expires
 * after `ttlMs`, and the next Station takes it then. With PGlite (one process) every lease is
 * free, and nothing changes.
 */
export function createLeases(
  db: StationDb,
  holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
) {
  async function acquire(name: string, ttlMs: number): Promise<boolean> {
    const rows = await db
      .insert(leases)
      .values({ name, holder, until: sql`${dbNow} + ${ttlMs}` })
      .onConflictDoUpdate({
        target: leases.name,
        set: { holder, until: sql`${dbNow} + ${ttlMs}` },
        setWhere: sql`${leases.until} <= ${dbNow} OR ${leases.holder} = ${holder}`,
      })
      .returning({ holder: leases.holder });
    return rows.length > 0;
  }

  async function renew(name: string, ttlMs: number): Promise<void> {
    await db
      .update(leases)
      .set({ until: sql`${dbNow} + ${ttlMs}` })
      .where(and(eq(leases.name, name), eq(leases.holder, holder)));
  }

  async function release(name: string): Promise<void> {
    await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
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
    acquire,
    release,
    holderOf,

    /**
     * Runs `job` under the lease `name` when this Station can take it (renewing it every
     * third of `ttlMs` while the job runs); else does not run it and says who holds it.
     */
    async exclusive<T>(
      name: string,
      job: () => Promise<T>,
      ttlMs = DEFAULT_LEASE_MS,
    ): Promise<LeaseOutcome<T>> {
      if (!(await acquire(name, ttlMs)))
        return { ran: false, holder: (await holderOf(name)) ?? 'another Station' };
      const renewer = setInterval(() => {
        renew(name, ttlMs).catch((err: unknown) => log.warn({ err, lease: name }, 'renewing a lease failed'));
      }, ttlMs / 3);
      renewer.unref();
      try {
        return { ran: true, value: await job() };
      } finally {
        clearInterval(renewer);
        await release(name).catch((err: unknown) =>
          log.warn({ err, lease: name }, 'releasing a lease failed'),
        );
      }
    },
  };
}

export type Leases = ReturnType<typeof createLeases>;
