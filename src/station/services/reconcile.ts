import { type Clock, clock as stationClock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';
import { snapshotPath } from '../storage/layout.ts';
import type { SnapshotStore } from '../storage/storage.ts';
import type { Uploads } from '../uploads/index.ts';
import { sha256Stream } from './file-hash.ts';
import type { NewSnapshotRow, SnapshotIndex, SnapshotState } from './snapshot-index.ts';
import { timeFromName } from './snapshot-time.ts';

const log = logger.child({ mod: 'station/reconcile' });

/** Reads the job fingerprint prefix out of `<job>__<time>__<fp8>[-n].tar.zst`. */
function fingerprintFromName(filename: string): string {
  return parseSnapshotName(filename)?.fingerprint8 ?? '';
}

/**
 * Makes the index follow the store (the store is the truth for bytes): snapshots the index
 * lacks are indexed (their SHA-256 read through the store), index rows whose snapshot is gone
 * are marked missing (and unmarked when it is back), staging areas of dead uploads are removed.
 */
export async function reconcile(deps: {
  index: SnapshotIndex;
  store: SnapshotStore;
  uploads: Uploads;
  clock?: Clock;
}): Promise<{ indexed: number; missing: number; restored: number }> {
  const { index, store } = deps;
  const clock = deps.clock ?? stationClock;
  await deps.uploads.sweep();
  await deps.uploads.reconcileStaging();
  const rows = new Map<string, SnapshotState>();
  for await (const page of index.states())
    for (const r of page) rows.set(snapshotPath({ ...r, instanceId: r.scoutInstanceId }), r);
  const found: NewSnapshotRow[] = [];
  let restored = 0;
  for await (const file of store.list()) {
    const key = snapshotPath(file);
    const row = rows.get(key);
    // What stays in `rows` after the listing is what the store lacks (no second set of 300,000 keys).
    rows.delete(key);
    const ref = { scoutId: file.scoutId, instanceId: file.instanceId ?? '', jobName: file.jobName };
    if (!row) {
      found.push({
        scoutId: file.scoutId,
        scoutInstanceId: ref.instanceId,
        jobName: file.jobName,
        filename: file.filename,
        sizeBytes: file.sizeBytes,
        sha256: await sha256Stream(await store.read(file)),
        fingerprint: fingerprintFromName(file.filename),
        keyFingerprint: null,
        mtime: file.mtimeMs,
        storedAt: file.mtimeMs || clock.now(),
        takenAt: timeFromName(file.filename) ?? (file.mtimeMs || clock.now()),
        unusual: null,
        missing: false,
      });
    } else if (row.takenAt === 0) {
      // Indexed before the snapshot's own time was recorded: read it from the name.
      await index.setTakenAt(ref, file.filename, timeFromName(file.filename) ?? row.storedAt);
    }
    if (row?.missing) {
      await index.setMissing(ref, file.filename, false);
      restored += 1;
    }
  }
  await index.insertMany(found);
  const indexed = found.length;
  let missing = 0;
  for (const row of rows.values()) {
    if (row.missing) continue;
    await index.setMissing(
      { scoutId: row.scoutId, instanceId: row.scoutInstanceId, jobName: row.jobName },
      row.filename,
      true,
    );
    missing += 1;
  }
  if (indexed + missing + restored > 0)
    log.warn({ indexed, missing, restored }, 'snapshot index reconciled with disk');
  return { indexed, missing, restored };
}
