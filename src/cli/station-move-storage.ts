import { ConfigError, loadStationConfig, type ServeFlags } from '../core/config.ts';
import { lockDataDir } from '../core/data-dir-lock.ts';
import { describeS3, parseS3Config } from '../core/s3-config.ts';
import { formatBytes } from '../shared/byte-sizes.ts';
import { openStationDatabase } from '../station/db/open.ts';
import { createSnapshotIndex } from '../station/services/snapshot-index.ts';
import { type CopyOutcome, copySnapshot, type IndexedSnapshot } from '../station/storage/copy-snapshot.ts';
import { createDiskStore } from '../station/storage/disk-store.ts';
import { snapshotPath } from '../station/storage/layout.ts';
import { createS3Store } from '../station/storage/s3-store.ts';
import type { SnapshotStore } from '../station/storage/storage.ts';

export interface MoveStorageFlags extends ServeFlags {
  to: string;
}

/**
 * `backupd station move-storage --to s3://BUCKET[/PREFIX]`: copies every indexed snapshot of
 * the disk store (BACKUP_ROOT) into the bucket, with the Station stopped. Each copy is checked
 * against the index's SHA-256 before it appears; one already in the bucket with the same bytes
 * is skipped, so a second run finishes an interrupted one. The disk is left as it was.
 */
export async function stationMoveStorage(flags: MoveStorageFlags): Promise<void> {
  const target = parseS3Config(
    { ...process.env, STORAGE_URL: flags.to },
    (message) => new ConfigError(message.replace('STORAGE_URL', '--to')),
  );
  if (!target) throw new ConfigError('--to must be an s3://BUCKET[/PREFIX] URL');
  const config = loadStationConfig(flags, { ...process.env, STORAGE_URL: '' });
  const lock = lockDataDir(config.dataDir);
  try {
    const db = await openStationDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    try {
      const from = createDiskStore({ backupRoot: config.backupRoot, stagingDir: config.stagingDir });
      const to = createS3Store(target);
      await to.prepare();
      const rows = await createSnapshotIndex(db.stationDb).all();
      const indexed: IndexedSnapshot[] = rows
        .filter((row) => !row.missing)
        .map((row) => ({
          key: {
            scoutId: row.scoutId,
            instanceId: row.scoutInstanceId,
            jobName: row.jobName,
            filename: row.filename,
          },
          sizeBytes: row.sizeBytes,
          sha256: row.sha256,
        }));
      const failed = await copyAll(from, to, indexed, describeS3(target));
      if (failed > 0)
        throw new Error(`${failed} snapshots were not copied (listed above); fix them and run again`);
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

async function copyAll(
  from: SnapshotStore,
  to: SnapshotStore,
  indexed: IndexedSnapshot[],
  where: string,
): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const known = new Set(indexed.map(({ key }) => snapshotPath(key)));
  for await (const file of from.list()) {
    const name = snapshotPath(file);
    if (!known.has(name))
      out(`skipped ${name}: not in the index (start the Station once to index it, then run again)`);
  }
  const totals = { copied: 0, already_there: 0, failed: 0, bytes: 0 };
  const started = performance.now();
  for (const [i, snapshot] of indexed.entries()) {
    const { key } = snapshot;
    const name = snapshotPath(key);
    const t = performance.now();
    let outcome: CopyOutcome;
    try {
      outcome = await copySnapshot(from, to, snapshot);
    } catch (error) {
      outcome = { status: 'failed', bytes: 0, problem: (error as Error).message };
    }
    totals[outcome.status] += 1;
    const position = `[${i + 1}/${indexed.length}]`;
    if (outcome.status === 'failed') out(`${position} FAILED ${name}: ${outcome.problem}`);
    else if (outcome.status === 'already_there')
      out(`${position} already there ${name} (${formatBytes(outcome.bytes)})`);
    else {
      totals.bytes += outcome.bytes;
      const seconds = (performance.now() - t) / 1000;
      out(
        `${position} copied ${name} (${formatBytes(outcome.bytes)}, ${formatBytes(outcome.bytes / Math.max(seconds, 0.001))}/s)`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  out(
    `${totals.copied} copied (${formatBytes(totals.bytes)} in ${seconds.toFixed(1)} s), ${totals.already_there} already there, ${totals.failed} failed, into ${where}`,
  );
  if (totals.failed === 0) {
    out(
      `Set STORAGE_URL=${where.replace(/\/$/, '')} (and the S3 variables) and start the Station; the disk copy is unchanged.`,
    );
  }
  return totals.failed;
}
