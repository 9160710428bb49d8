import { desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../core/clock.ts';
import type { ReplicaPull } from '../../shared/protocol/replication.ts';
import type { StationDb } from '../db/open.ts';
import { replicationPulls } from '../db/replication-tables.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Who pulls from this Station (the primary): one row per `replicate` token. */
export function createReplicationPulls(db: StationDb, clock: Clock) {
  async function touch(
    token: { id: string; name: string },
    set: Partial<typeof replicationPulls.$inferInsert>,
  ) {
    const now = clock.now();
    await db
      .insert(replicationPulls)
      .values({ tokenId: token.id, tokenName: token.name, firstPullAt: now, ...set })
      .onConflictDoUpdate({ target: replicationPulls.tokenId, set: { tokenName: token.name, ...set } });
  }

  return {
    /** A replica listed the snapshots. */
    listed: (token: { id: string; name: string }) => touch(token, { lastListAt: clock.now() }),

    /** A replica started downloading `bytes` of a snapshot. */
    async downloading(token: { id: string; name: string }, bytes: number): Promise<void> {
      await touch(token, { lastDownloadAt: clock.now() });
      await db
        .update(replicationPulls)
        .set({
          downloads: sql`${replicationPulls.downloads} + 1`,
          bytesServed: sql`${replicationPulls.bytesServed} + ${bytes}`,
        })
        .where(eq(replicationPulls.tokenId, token.id));
    },

    async list(): Promise<ReplicaPull[]> {
      const rows = await db.select().from(replicationPulls).orderBy(desc(replicationPulls.firstPullAt));
      return rows.map((row) => ({
        token_id: row.tokenId,
        name: row.tokenName,
        first_pull_at: iso(row.firstPullAt),
        last_list_at: iso(row.lastListAt),
        last_download_at: iso(row.lastDownloadAt),
        downloads: row.downloads,
        bytes_served: row.bytesServed,
      }));
    },
  };
}

export type ReplicationPulls = ReturnType<typeof createReplicationPulls>;
