import { type Clock, clock as stationClock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';
import { fullCollector } from '../gc-pacing.ts';
import type { JobKey } from '../job-key.ts';
import { jobPath, snapshotPath } from '../storage/layout.ts';
import type { SnapshotStore, StoredFile } from '../storage/storage.ts';
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
 * A batch is compared once it holds `files` files (whole jobs: it may run over) or `jobs` jobs
 * (each job is one condition of the index query).
 */
const BATCH = { files: 5000, jobs: 100 };

interface Counts {
  indexed: number;
  missing: number;
  restored: number;
}

type Deps = { index: SnapshotIndex; store: SnapshotStore; clock: Clock };

const jobOf = (file: StoredFile): JobKey => ({
  scoutId: file.scoutId,
  instanceId: file.instanceId ?? '',
  jobName: file.jobName,
});

/** Marks `row` missing (the store lacks it) unless it is already. */
async function markMissing(index: SnapshotIndex, row: SnapshotState, counts: Counts): Promise<void> {
  if (row.missing) return;
  await index.setMissing(
    { scoutId: row.scoutId, instanceId: row.scoutInstanceId, jobName: row.jobName },
    row.filename,
    true,
  );
  counts.missing += 1;
}

/** Compares the files of a few whole jobs with those jobs' index rows. */
async function compareJobs(deps: Deps, batch: Map<string, StoredFile[]>, counts: Counts): Promise<void> {
  const { index, store, clock } = deps;
  const jobs = [...batch.values()].map((files) => jobOf(files[0] as StoredFile));
  const rows = new Map<string, SnapshotState>();
  for (const r of await index.statesOf(jobs))
    rows.set(snapshotPath({ ...r, instanceId: r.scoutInstanceId }), r);
  const found: NewSnapshotRow[] = [];
  for (const file of [...batch.values()].flat()) {
    const key = snapshotPath(file);
    const row = rows.get(key);
    // What stays in `rows` after the listing is what the store lacks.
    rows.delete(key);
    const ref = jobOf(file);
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
      counts.restored += 1;
    }
  }
  await index.insertMany(found);
  counts.indexed += found.length;
  for (const row of rows.values()) await markMissing(index, row, counts);
}

/**
 * Makes the index follow the store (the store is the truth for bytes): snapshots the index
 * lacks are indexed (their SHA-256 read through the store), index rows whose snapshot is gone
 * are marked missing (and unmarked when it is back), staging areas of dead uploads are removed.
 * Job by job, a batch of whole jobs at a time (the store lists each job's files together), so
 * memory stays that of a batch, not of the whole index (bench/overview.ts: 300,000 snapshots).
 */
export async function reconcile(deps: {
  index: SnapshotIndex;
  store: SnapshotStore;
  uploads: Uploads;
  clock?: Clock;
  /** Smaller batches for tests. */
  batch?: typeof BATCH;
}): Promise<Counts> {
  const limit = deps.batch ?? BATCH;
  const collect = fullCollector();
  const compared: Deps = { index: deps.index, store: deps.store, clock: deps.clock ?? stationClock };
  await deps.uploads.sweep();
  await deps.uploads.reconcileStaging();
  const counts: Counts = { indexed: 0, missing: 0, restored: 0 };
  /** The jobs the store holds (10,000 short keys at 1,000 hosts). */
  const stored = new Set<string>();
  let batch = new Map<string, StoredFile[]>();
  let files = 0;
  for await (const file of deps.store.list()) {
    const job = jobPath(jobOf(file));
    let group = batch.get(job);
    if (!group) {
      if (files >= limit.files || batch.size >= limit.jobs) {
        await compareJobs(compared, batch, counts);
        // The batch's listing and rows are garbage now: collected before the heap grows with them.
        collect?.();
        batch = new Map();
        files = 0;
      }
      group = [];
      batch.set(job, group);
      stored.add(job);
    }
    group.push(file);
    files += 1;
  }
  await compareJobs(compared, batch, counts);
  collect?.();
  // Jobs of which the store holds no file at all.
  for (const job of await deps.index.jobs()) {
    if (stored.has(jobPath(job))) continue;
    for (const row of await deps.index.statesOf([job])) await markMissing(deps.index, row, counts);
  }
  if (counts.indexed + counts.missing + counts.restored > 0)
    log.warn(counts, 'snapshot index reconciled with disk');
  return counts;
}
