import { and, eq, lt, ne } from 'drizzle-orm';
import { logger } from '../../core/log.ts';
import { uploadSessions } from '../db/station-tables.ts';
import { snapshotPath } from '../storage/layout.ts';
import type { StagingArea } from '../storage/storage.ts';
import { stagedUploadOf } from './sessions.ts';
import { ABANDONED_AFTER_MS, STORED_KEPT_MS, type UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/uploads' });
/** Initiations run the sweep themselves at most this often (the Station also runs it hourly). */
const SWEEP_AT_INITIATION_EVERY_MS = 60_000;

/**
 * Abandoned uploads (no bytes for ABANDONED_AFTER_MS) lose their session and their staging
 * area; stored sessions are forgotten after STORED_KEPT_MS.
 */
export async function sweepSessions(deps: UploadDeps): Promise<number> {
  const now = deps.clock.now();
  const abandoned = await deps.db
    .delete(uploadSessions)
    .where(and(ne(uploadSessions.status, 'stored'), lt(uploadSessions.updatedAt, now - ABANDONED_AFTER_MS)))
    .returning();
  for (const row of abandoned) await deps.store.abortStaging(stagedUploadOf(row));
  await deps.db
    .delete(uploadSessions)
    .where(and(eq(uploadSessions.status, 'stored'), lt(uploadSessions.updatedAt, now - STORED_KEPT_MS)));
  if (abandoned.length > 0) log.info({ count: abandoned.length }, 'removed abandoned uploads');
  return abandoned.length;
}

/**
 * Staging areas of no live session are removed: at start-up every such area (`all`), later
 * only those older than ABANDONED_AFTER_MS (another Station may be creating one right now).
 * An area belongs to a live session by its upload id or by its target (the reserved name).
 */
export async function abortOrphans(deps: UploadDeps, all: boolean): Promise<number> {
  const live = await deps.db.select().from(uploadSessions).where(ne(uploadSessions.status, 'stored'));
  const ids = new Set(live.map((row) => row.uploadId));
  const targets = new Set(live.map((row) => snapshotPath(stagedUploadOf(row).target)));
  const before = deps.clock.now() - ABANDONED_AFTER_MS;
  const orphans: StagingArea[] = [];
  for await (const area of deps.store.listStaging()) {
    if (area.uploadId !== null && ids.has(area.uploadId)) continue;
    if (area.target !== null && targets.has(snapshotPath(area.target))) continue;
    if (all ? area.uploadId === null && (area.startedMs ?? 0) >= before : (area.startedMs ?? 0) >= before)
      continue;
    orphans.push(area);
  }
  for (const area of orphans) await deps.store.abortStaging(area);
  if (orphans.length > 0) log.info({ count: orphans.length }, 'removed staging areas of no upload');
  return orphans.length;
}

/** The sweep, run hourly by the Station and at most once a minute by initiations. */
export function createSweeper(deps: UploadDeps) {
  let lastSweep = Number.NEGATIVE_INFINITY;
  async function sweep(): Promise<void> {
    lastSweep = deps.clock.now();
    await sweepSessions(deps);
    await abortOrphans(deps, false);
  }
  return {
    sweep,
    async sweepIfDue(): Promise<void> {
      if (deps.clock.now() - lastSweep > SWEEP_AT_INITIATION_EVERY_MS) await sweep();
    },
  };
}
