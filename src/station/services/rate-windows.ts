import { and, eq, lt, sql } from 'drizzle-orm';
import { MemoryWindows, type WindowCounter } from '../../core/auth/rate-limit.ts';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { StationDatabase, StationDb } from '../db/open.ts';
import { rateWindows } from '../db/station-tables.ts';

const log = logger.child({ mod: 'station/rate-windows' });
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/**
 * The Station's rate-limit windows in its database (`rate_windows`), so Stations sharing one
 * PostgreSQL count one client's requests and failed sign-ins together. Each count is one
 * atomic upsert: the row's window continues, or a new one starts when it has ended.
 * Ended windows are deleted every ten minutes by whichever Station counts next.
 */
export function createRateWindows(db: StationDb): WindowCounter & { prune(): Promise<number> } {
  let lastPrune = 0;

  /** Deletes the windows that have ended; returns how many. */
  async function prune(): Promise<number> {
    const gone = await db
      .delete(rateWindows)
      .where(lt(rateWindows.windowEnd, clock.now()))
      .returning({ key: rateWindows.key });
    return gone.length;
  }

  function pruneIfDue(now: number): void {
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    prune().catch((err: unknown) => log.warn({ err }, 'pruning rate-limit windows failed'));
  }

  return {
    prune,

    async add(key, windowMs, delta = 1) {
      const now = clock.now();
      const ended = sql`${rateWindows.windowEnd} <= ${now}`;
      const [row] = await db
        .insert(rateWindows)
        .values({ key, windowStart: now, windowEnd: now + windowMs, count: delta })
        .onConflictDoUpdate({
          target: rateWindows.key,
          set: {
            windowStart: sql`CASE WHEN ${ended} THEN excluded.window_start ELSE ${rateWindows.windowStart} END`,
            windowEnd: sql`CASE WHEN ${ended} THEN excluded.window_end ELSE ${rateWindows.windowEnd} END`,
            count: sql`CASE WHEN ${ended} THEN excluded.count ELSE ${rateWindows.count} + excluded.count END`,
          },
        })
        .returning({ count: rateWindows.count, windowEnd: rateWindows.windowEnd });
      pruneIfDue(now);
      if (!row) throw new Error('rate-limit window upsert returned no row');
      return { count: row.count, windowEnd: row.windowEnd };
    },

    async takeBack(key, windowEnd) {
      await db
        .update(rateWindows)
        .set({ count: sql`GREATEST(${rateWindows.count} - 1, 0)` })
        .where(and(eq(rateWindows.key, key), eq(rateWindows.windowEnd, windowEnd)));
    },
  };
}

/**
 * The Station's rate-limit counter: in PostgreSQL when the Station runs on a server (several
 * Stations may share it), in memory on PGlite (one process by nature, so nothing is shared;
 * a write per API request would only cost the NAS time — measured ~1–2.5 ms on PGlite).
 */
export function stationWindows(storage: StationDatabase): WindowCounter {
  return storage.kind === 'postgres' ? createRateWindows(storage.stationDb) : new MemoryWindows();
}
