import { and, desc, eq, or, sql } from 'drizzle-orm';
import { settings } from '../../core/db/core-tables.pg.ts';
import { formatBytes } from '../../shared/byte-sizes.ts';
import { jobSummaries } from '../db/job-summary-tables.ts';
import type { StationDb } from '../db/open.ts';
import { instances, snapshots } from '../db/station-tables.ts';
import type { JobKey } from '../job-key.ts';

export type SnapshotRow = typeof snapshots.$inferSelect;
/** A row to index: protection and the lock date are set apart (setProtected, setLockedUntil). */
export type NewSnapshotRow = Omit<SnapshotRow, 'protected' | 'lockedUntil'> &
  Partial<Pick<SnapshotRow, 'protected' | 'lockedUntil'>>;
export type InstanceRow = typeof instances.$inferSelect;
/** What reconcile needs of an index row (`statesOf`). */
export type SnapshotState = Pick<
  SnapshotRow,
  'scoutId' | 'scoutInstanceId' | 'jobName' | 'filename' | 'missing' | 'takenAt' | 'storedAt'
>;

export type { JobKey } from '../job-key.ts';

/**
 * Newest first by the snapshot's own time, never by arrival. Within one second (a force-send
 * right after a backup: same time, same fingerprint, the name gets `-2`), the later arrival is
 * the newer; the file name breaks what is left.
 */
const newestFirst = [desc(snapshots.takenAt), desc(snapshots.storedAt), desc(snapshots.filename)] as const;

const sameJob = (ref: JobKey) =>
  and(
    eq(snapshots.scoutId, ref.scoutId),
    eq(snapshots.scoutInstanceId, ref.instanceId),
    eq(snapshots.jobName, ref.jobName),
  );

/**
 * Why a new snapshot looks wrong next to the previous one of its job, or null. Unusual:
 * less than half or more than double the previous size, or made with another Scout key.
 */
export function unusualReason(
  next: { sizeBytes: number; keyFingerprint: string | null },
  previous: { sizeBytes: number; keyFingerprint: string | null } | undefined,
): string | null {
  if (!previous) return null;
  if (next.keyFingerprint && previous.keyFingerprint && next.keyFingerprint !== previous.keyFingerprint) {
    return `made with another Scout key (fingerprint ${next.keyFingerprint.slice(0, 8)}…, previous ${previous.keyFingerprint.slice(0, 8)}…)`;
  }
  if (next.sizeBytes * 2 < previous.sizeBytes) {
    return `${formatBytes(next.sizeBytes)} is less than half the previous snapshot (${formatBytes(previous.sizeBytes)})`;
  }
  if (next.sizeBytes > previous.sizeBytes * 2) {
    return `${formatBytes(next.sizeBytes)} is more than double the previous snapshot (${formatBytes(previous.sizeBytes)})`;
  }
  return null;
}

const VERSION_KEY = 'snapshot_index_version';

export function createSnapshotIndex(db: StationDb) {
  /**
   * Every change to the index bumps a counter in the database, so a reader (the overview)
   * can tell in one cheap query whether what it built before is still current — also when
   * several Station processes share the database.
   */
  async function bump(): Promise<void> {
    await db
      .insert(settings)
      .values({ key: VERSION_KEY, value: '1' })
      .onConflictDoUpdate({
        target: settings.key,
        set: { value: sql`(${settings.value}::bigint + 1)::text` },
      });
  }

  /** The job's snapshots present on disk, newest first. */
  async function list(ref: JobKey): Promise<SnapshotRow[]> {
    return db
      .select()
      .from(snapshots)
      .where(and(sameJob(ref), eq(snapshots.missing, false)))
      .orderBy(...newestFirst);
  }

  return {
    async version(): Promise<string> {
      const [row] = await db.select().from(settings).where(eq(settings.key, VERSION_KEY));
      return row?.value ?? '0';
    },

    async newest(ref: JobKey): Promise<SnapshotRow | undefined> {
      const [row] = await db
        .select()
        .from(snapshots)
        .where(and(sameJob(ref), eq(snapshots.missing, false)))
        .orderBy(...newestFirst)
        .limit(1);
      return row;
    },

    async byName(ref: JobKey, filename: string): Promise<SnapshotRow | undefined> {
      const [row] = await db
        .select()
        .from(snapshots)
        .where(and(sameJob(ref), eq(snapshots.filename, filename)));
      return row;
    },

    async bySha(ref: JobKey, sha256: string, sizeBytes: number): Promise<SnapshotRow | undefined> {
      const [row] = await db
        .select()
        .from(snapshots)
        .where(
          and(
            sameJob(ref),
            eq(snapshots.sha256, sha256),
            eq(snapshots.sizeBytes, sizeBytes),
            eq(snapshots.missing, false),
          ),
        )
        .limit(1);
      return row;
    },

    /** Newest snapshot whose job fingerprint matches an 8- or 64-character prefix. */
    async newestByFingerprint(ref: JobKey, fp: string): Promise<SnapshotRow | undefined> {
      const rows = await db
        .select()
        .from(snapshots)
        .where(and(sameJob(ref), eq(snapshots.missing, false)))
        .orderBy(...newestFirst);
      return rows.find(
        (r) => r.fingerprint !== '' && (r.fingerprint.startsWith(fp) || fp.startsWith(r.fingerprint)),
      );
    },

    async insert(row: NewSnapshotRow): Promise<void> {
      await db
        .insert(snapshots)
        .values(row)
        .onConflictDoUpdate({
          target: [snapshots.scoutId, snapshots.scoutInstanceId, snapshots.jobName, snapshots.filename],
          set: { ...row },
        });
      await bump();
    },

    /** Adds rows found on disk, in batches (start-up indexing of many files). */
    async insertMany(rows: NewSnapshotRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += 500) {
        await db
          .insert(snapshots)
          .values(rows.slice(i, i + 500))
          .onConflictDoNothing();
      }
      await bump();
    },

    async remove(ref: JobKey, filename: string): Promise<boolean> {
      const gone = await db
        .delete(snapshots)
        .where(and(sameJob(ref), eq(snapshots.filename, filename)))
        .returning({ filename: snapshots.filename });
      await bump();
      return gone.length > 0;
    },

    async setMissing(ref: JobKey, filename: string, missing: boolean): Promise<void> {
      await db
        .update(snapshots)
        .set({ missing })
        .where(and(sameJob(ref), eq(snapshots.filename, filename)));
      await bump();
    },

    list,

    /** Every row of one job, newest first, files missing included. */
    async ofJob(ref: JobKey): Promise<SnapshotRow[]> {
      return db
        .select()
        .from(snapshots)
        .where(sameJob(ref))
        .orderBy(...newestFirst);
    },

    /** Protects a snapshot from retention and deletion, or lifts that; false when there is none. */
    async setProtected(ref: JobKey, filename: string, value: boolean): Promise<boolean> {
      const changed = await db
        .update(snapshots)
        .set({ protected: value })
        .where(and(sameJob(ref), eq(snapshots.filename, filename)))
        .returning({ filename: snapshots.filename });
      await bump();
      return changed.length > 0;
    },

    /** Records the object-lock retention date (ms) the store set on the snapshot's object. */
    async setLockedUntil(ref: JobKey, filename: string, lockedUntil: number | null): Promise<void> {
      await db
        .update(snapshots)
        .set({ lockedUntil })
        .where(and(sameJob(ref), eq(snapshots.filename, filename)));
      await bump();
    },

    /** Sets the snapshot time of rows indexed before it was recorded. */
    async setTakenAt(ref: JobKey, filename: string, takenAt: number): Promise<void> {
      await db
        .update(snapshots)
        .set({ takenAt })
        .where(and(sameJob(ref), eq(snapshots.filename, filename)));
      await bump();
    },

    /**
     * Every row, ordered. Aggregated to one JSON value inside the database: PGlite decodes
     * result rows slowly in JavaScript (~300 ms for 10,000 rows), one text value is fast.
     */
    async all(): Promise<SnapshotRow[]> {
      const s = snapshots;
      const [result] = await db
        .select({
          rows: sql<string>`coalesce(json_agg(json_build_object(
            'scoutId', ${s.scoutId}, 'scoutInstanceId', ${s.scoutInstanceId}, 'jobName', ${s.jobName},
            'filename', ${s.filename}, 'sizeBytes', ${s.sizeBytes}, 'sha256', ${s.sha256},
            'fingerprint', ${s.fingerprint}, 'keyFingerprint', ${s.keyFingerprint}, 'mtime', ${s.mtime},
            'storedAt', ${s.storedAt}, 'takenAt', ${s.takenAt}, 'unusual', ${s.unusual}, 'missing', ${s.missing},
            'protected', ${s.protected}, 'lockedUntil', ${s.lockedUntil})
            ORDER BY ${s.scoutId}, ${s.scoutInstanceId}, ${s.jobName}, ${s.takenAt}, ${s.filename}), '[]')::text`,
        })
        .from(s);
      return JSON.parse(result?.rows ?? '[]') as SnapshotRow[];
    },

    /**
     * The key and state of every row of `jobs` (a few at a time: reconcile compares the store
     * job by job, so the Station never holds the whole index, 300,000 rows at 1,000 hosts).
     * One JSON text (see `all`).
     */
    async statesOf(jobs: readonly JobKey[]): Promise<SnapshotState[]> {
      if (jobs.length === 0) return [];
      const s = snapshots;
      const [result] = await db
        .select({
          rows: sql<string>`coalesce(json_agg(json_build_array(${s.scoutId}, ${s.scoutInstanceId},
            ${s.jobName}, ${s.filename}, ${s.missing}, ${s.takenAt}, ${s.storedAt})), '[]')::text`,
        })
        .from(s)
        .where(or(...jobs.map(sameJob)));
      return (
        JSON.parse(result?.rows ?? '[]') as [string, string, string, string, boolean, number, number][]
      ).map(([scoutId, scoutInstanceId, jobName, filename, missing, takenAt, storedAt]) => ({
        scoutId,
        scoutInstanceId,
        jobName,
        filename,
        missing,
        takenAt,
        storedAt,
      }));
    },

    /** Every job that has a row, missing or not (one JSON text; 10,000 at 1,000 hosts). */
    async jobs(): Promise<JobKey[]> {
      const s = snapshots;
      const [result] = await db
        .select({
          rows: sql<string>`coalesce(json_agg(json_build_array(j.scout_id, j.scout_instance_id, j.job_name)), '[]')::text`,
        })
        .from(sql`(SELECT DISTINCT ${s.scoutId}, ${s.scoutInstanceId}, ${s.jobName} FROM ${s}) AS j`);
      return (JSON.parse(result?.rows ?? '[]') as [string, string, string][]).map(
        ([scoutId, instanceId, jobName]) => ({ scoutId, instanceId, jobName }),
      );
    },

    /** Present snapshots and their bytes, summed over the jobs' summaries (one row per job). */
    async totals(): Promise<{ snapshot_count: number; snapshot_bytes: number }> {
      const [row] = await db
        .select({
          count: sql<string>`coalesce(sum(${jobSummaries.snapshotCount}), 0)`,
          bytes: sql<string>`coalesce(sum(${jobSummaries.totalBytes}), 0)`,
        })
        .from(jobSummaries);
      return { snapshot_count: Number(row?.count ?? 0), snapshot_bytes: Number(row?.bytes ?? 0) };
    },

    async ofInstance(scoutId: string, instanceId: string): Promise<SnapshotRow[]> {
      return db
        .select()
        .from(snapshots)
        .where(and(eq(snapshots.scoutId, scoutId), eq(snapshots.scoutInstanceId, instanceId)));
    },

    async removeInstance(scoutId: string, instanceId: string): Promise<number> {
      const gone = await db
        .delete(snapshots)
        .where(and(eq(snapshots.scoutId, scoutId), eq(snapshots.scoutInstanceId, instanceId)))
        .returning({ filename: snapshots.filename });
      await db
        .delete(instances)
        .where(and(eq(instances.scoutId, scoutId), eq(instances.scoutInstanceId, instanceId)));
      await bump();
      return gone.length;
    },

    async instances(): Promise<InstanceRow[]> {
      return db.select().from(instances);
    },

    async instance(scoutId: string, instanceId: string): Promise<InstanceRow | undefined> {
      const [row] = await db
        .select()
        .from(instances)
        .where(and(eq(instances.scoutId, scoutId), eq(instances.scoutInstanceId, instanceId)));
      return row;
    },

    /** Records that an instance was seen, with the facts it announced. */
    async touchInstance(
      scoutId: string,
      instanceId: string,
      facts: { keyFingerprint?: string | undefined; advertisedUrl?: string | undefined },
      now: number,
    ): Promise<void> {
      const set: Partial<InstanceRow> = { lastSeenAt: now };
      if (facts.keyFingerprint) set.keyFingerprint = facts.keyFingerprint;
      if (facts.advertisedUrl) set.advertisedUrl = facts.advertisedUrl;
      await db
        .insert(instances)
        .values({
          scoutId,
          scoutInstanceId: instanceId,
          keyFingerprint: facts.keyFingerprint ?? null,
          advertisedUrl: facts.advertisedUrl ?? null,
          firstSeenAt: now,
          lastSeenAt: now,
        })
        .onConflictDoUpdate({ target: [instances.scoutId, instances.scoutInstanceId], set });
      await bump();
    },
  };
}

export type SnapshotIndex = ReturnType<typeof createSnapshotIndex>;
