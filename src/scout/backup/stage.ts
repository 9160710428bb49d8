import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import type { ArchiveResult, writeArchive } from '../archive/pipeline.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { summarizeSkipped } from '../jobs/skipped.ts';
import { type EntryOutcome, type SkippedEntry, walkJob } from '../jobs/walk.ts';
import { WalkFingerprints } from '../jobs/walk-fingerprints.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { OperationContext } from '../schedule/runner.ts';
import type { JobStates } from '../state/job-states.ts';
import type { StationClient } from '../upload/station-client.ts';
import { announcement, type StagedArchive, type UploadTarget } from '../upload/uploader.ts';
import { type StreamedUpload, uploadWhileArchiving } from '../upload/while-archiving.ts';
import type { Scan, Seen } from './scan.ts';

const log = logger.child({ mod: 'scout/backup' });

export interface StageDeps {
  /** Where archives are written (`<data dir>/staging`). */
  stagingDir: string;
  instanceId: string;
  keys: KeyStore;
  states: JobStates;
  /** The archive pipeline (writeArchive, or a test's wrapper of it). */
  archiver: typeof writeArchive;
}

/** An archive staged for a job, and its streamed upload when one runs that is to be finished. */
export interface Staging {
  staged: StagedArchive;
  upload: StreamedUpload | null;
}

/**
 * Archives the job into the staging folder, walking it again straight into the archive
 * (memory flat in the job's size) and fingerprinting what the archive holds on the way.
 * What the archive left out counts in neither fingerprint: `fingerprint` (sent with the
 * snapshot, what a drill reads back) covers every entry in the archive, `retry_fingerprint`
 * (what change detection keeps) also leaves out those archived incomplete, so the next cycle
 * tries them again.
 *
 * The archive starts as soon as the extended attributes are listed, while the scan's walk may
 * still run (issue #27: the user does not wait for a whole walk before the first byte is
 * archived). `wanted` decides from the scan whether this archive is to be made at all: when
 * not (the job did not change), the archive stops, nothing stays staged and the answer is
 * null. With `station`, the upload runs while the archive is written (a streamed upload,
 * src/scout/upload/while-archiving.ts), initiated once the scan is done, announced with its
 * fingerprint; the chunks written meanwhile go first. An archive whose own fingerprint
 * differs (entries changed, appeared or went between the scan's walk and the archive's) is
 * not what was announced: that upload is abandoned and the staged archive goes up afterwards
 * as a plain upload, declaring the archive's own fingerprint.
 */
export async function stageArchive(
  deps: StageDeps,
  job: DiscoveredJob,
  scan: Scan,
  wanted: (seen: Seen) => boolean,
  ctx: OperationContext,
  station: { client: StationClient; target: UploadTarget } | null,
): Promise<Staging | null> {
  const config = job.config;
  if (!config) throw new Error('job without a valid config');
  await mkdir(deps.stagingDir, { recursive: true });
  const key = deps.keys.current();
  const now = clock.now();
  const file = join(deps.stagingDir, `${config.job_name}-${now}-${randomBytes(4).toString('hex')}.tar.zst`);
  const mtimes = config.change_detection === 'mtimes';
  const complete = (outcome: EntryOutcome) => outcome === 'archived';
  const fingerprints = new WalkFingerprints([
    {},
    { counts: complete },
    ...(mtimes ? [{ counts: complete, mtimes }] : []),
  ]);
  const walkSkipped: SkippedEntry[] = [];
  // The archive's size is known once the scan is done; until then progress counts without it.
  let total = 0;
  ctx.progress({ phase: 'archiving', bytes_done: 0, bytes_total: 0 });
  const timestamp = utcSecond(now);
  const streamKey = `${deps.instanceId}-${config.job_name}-s${randomBytes(8).toString('hex')}-${now}`;
  /** The scan's result when the archive is wanted, null when not; stops the archive otherwise. */
  const unwanted = new AbortController();
  /** The scan's result once it is known and wanted. */
  let known: Seen | null = null;
  const decided = scan.seen.then((seen) => {
    if (!wanted(seen)) {
      unwanted.abort(new Error('the job did not change: no archive is needed'));
      return null;
    }
    known = seen;
    total = seen.total;
    ctx.progress({ bytes_total: total });
    return seen;
  });
  decided.catch((error: unknown) => unwanted.abort(error)); // a failed scan stops the archive
  let archiveDone = false;
  /** The archive's fingerprints (every entry, without the incomplete, with mtimes), once its walk is done. */
  let digests: string[] | null = null;
  const digestsOnce = () => {
    digests ??= fingerprints.digests();
    return digests;
  };
  /** The streamed upload was told the archive's end as soon as it was written (onSealed). */
  let completed = false;
  const upload = station
    ? uploadWhileArchiving({
        ...station,
        announce: decided.then((seen) => {
          if (!seen) throw new Error('no archive is needed');
          return announcement(
            {
              fingerprint: seen.fingerprint,
              timestamp,
              idempotency_key: streamKey,
              key_fingerprint: key.fingerprint,
            },
            station.target,
          );
        }),
        path: file,
        signal: ctx.signal,
        onProgress: (done) => {
          if (archiveDone) ctx.progress({ bytes_done: done });
        },
      })
    : null;
  let result: ArchiveResult;
  let seen: Seen | null;
  try {
    const signal = AbortSignal.any([ctx.signal, unwanted.signal]);
    result = await deps.archiver({
      jobDir: job.absolute_path,
      entries: walkJob(job.absolute_path, config, {
        signal,
        onSkip: (entry) => walkSkipped.push(entry),
        fingerprints,
      }),
      followSymlinks: config.follow_symlinks,
      xattrs: await scan.xattrs(),
      recipient: key.publicKey,
      outPath: file,
      signal,
      onProgress: (bytes) => ctx.progress({ bytes_done: total > 0 ? Math.min(bytes, total) : bytes }),
      ...(upload ? { onWritten: upload.onWritten } : {}),
      // Every byte is written and the walk is done: an archive that is the one announced is
      // finalized while the staged file is fsynced (the Station fsyncs its copy meanwhile).
      onSealed: (end) => {
        if (!upload || !known || digestsOnce()[0] !== known.fingerprint) return;
        completed = true;
        upload.complete(end);
      },
    });
    try {
      // Cancelled once the archive was renamed into place: it is not staged either.
      ctx.signal.throwIfAborted();
      // A small archive may be complete before the scan: it is wanted only if the job changed.
      seen = await decided;
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    if (!seen) await rm(file, { force: true });
  } catch (error) {
    // Stopped because the scan said so (the job did not change, or the walk failed), not by
    // the stop of the scan below.
    const byScan = unwanted.signal.aborted && !ctx.signal.aborted;
    scan.done();
    await upload?.abandon(error as Error);
    if (byScan) {
      if ((await decided.catch(() => undefined)) === null) return null;
      throw unwanted.signal.reason;
    }
    throw error;
  }
  if (!seen) {
    await upload?.abandon(new Error('the job did not change: no archive is needed'));
    return null;
  }
  const [archived = '', retry = '', change] = digestsOnce();
  const streamed = upload !== null && archived === seen.fingerprint;
  const incomplete = result.skipped.some((entry) => entry.inArchive);
  const skipped = summarizeSkipped([...walkSkipped, ...result.skipped]);
  const staged: StagedArchive = {
    file,
    size: result.size,
    sha256: result.sha256,
    fingerprint: archived,
    ...(incomplete ? { retry_fingerprint: retry } : {}),
    ...(change !== undefined ? { change_fingerprint: change } : {}),
    skipped,
    timestamp,
    idempotency_key: streamed
      ? streamKey
      : `${deps.instanceId}-${config.job_name}-${result.sha256.slice(0, 16)}-${now}`,
    key_fingerprint: key.fingerprint,
    ...(streamed ? { streamed: true } : {}),
  };
  if (skipped) log.warn({ job: config.job_name, ...skipped }, 'the archive leaves entries out');
  if (upload && !streamed) {
    log.info(
      { job: config.job_name },
      'the job changed while it was archived: sending it with its own fingerprint',
    );
    await upload.abandon(
      new Error('the archive is not the one announced (the job changed during the backup)'),
    );
  }
  await deps.states.update(job.relative_path, config.job_name, { staged });
  archiveDone = true;
  if (!completed) upload?.complete({ size: result.size, sha256: result.sha256 });
  return { staged, upload: streamed ? upload : null };
}
