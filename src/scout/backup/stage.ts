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
import type { ArchiveRemoval } from './archive-removal.ts';
import type { Scan, Seen } from './scan.ts';

const log = logger.child({ mod: 'scout/backup' });

/** Why a job of many small files goes up once archived, not while (src/scout/backup/scan.ts' SMALL_FILES). */
const WALKED_ONCE = 'a job of many small files is walked once, by its archive: it goes up once archived';

export interface StageDeps {
  /** Where archives are written (`<data dir>/staging`). */
  stagingDir: string;
  instanceId: string;
  keys: KeyStore;
  states: JobStates;
  /** The archive pipeline (writeArchive, or a test's wrapper of it). */
  archiver: typeof writeArchive;
  /** Uploaded archives being deleted: a new one is written once they are gone. */
  removal: ArchiveRemoval;
}

/** An archive staged for a job, and its streamed upload when one runs that is to be finished. */
export interface Staging {
  staged: StagedArchive;
  upload: StreamedUpload | null;
  /**
   * Hands the streamed upload's progress to the operation, whose phase turns `uploading` now:
   * answers the bytes sent so far (a small archive may be sent whole already), and each later
   * report of the upload follows as `bytes_done`. Until then the phase is `archiving`, whose
   * bytes are the archive's, so the upload reports nothing (0 without a streamed upload).
   */
  reportUpload: () => number;
}

/**
 * The fingerprints an archive's walk computes: every entry (sent with the snapshot, what a
 * drill reads back), without those archived incomplete (`retry_fingerprint`, so the next cycle
 * tries them again), and with mtimes when the job's change detection uses them.
 */
function archiveFingerprints(mtimes: boolean): WalkFingerprints {
  const complete = (outcome: EntryOutcome) => outcome === 'archived';
  return new WalkFingerprints([{}, { counts: complete }, ...(mtimes ? [{ counts: complete, mtimes }] : [])]);
}

/**
 * What the scan says of the archive being written beside it: `decided` resolves with the
 * scan's result when the archive is wanted, null when not (and `unwanted` then stops the
 * archive, as a failed scan does); `known` and `total` (the bytes the archive will hold, for
 * progress) are set once it is wanted.
 */
function scanVerdict(scan: Scan, wanted: (seen: Seen) => boolean, ctx: OperationContext) {
  const unwanted = new AbortController();
  const verdict = {
    unwanted,
    known: null as Seen | null,
    total: 0,
    decided: scan.seen.then((seen) => {
      if (!wanted(seen)) {
        unwanted.abort(new Error('the job did not change: no archive is needed'));
        return null;
      }
      verdict.known = seen;
      if (seen.total !== null) {
        verdict.total = seen.total;
        ctx.progress({ bytes_total: seen.total });
      }
      return seen;
    }),
  };
  verdict.decided.catch((error: unknown) => unwanted.abort(error));
  return verdict;
}

/** The record of a staged archive, from the archive's result and its walk's fingerprints. */
function stagedRecord(made: {
  file: string;
  result: ArchiveResult;
  /** Every entry, without the incomplete, with mtimes (when the job uses them). */
  digests: string[];
  walkSkipped: SkippedEntry[];
  timestamp: string;
  idempotencyKey: string;
  keyFingerprint: string;
  streamed: boolean;
}): StagedArchive {
  const [archived = '', retry = '', change] = made.digests;
  const incomplete = made.result.skipped.some((entry) => entry.inArchive);
  return {
    file: made.file,
    size: made.result.size,
    sha256: made.result.sha256,
    fingerprint: archived,
    ...(incomplete ? { retry_fingerprint: retry } : {}),
    ...(change !== undefined ? { change_fingerprint: change } : {}),
    skipped: summarizeSkipped([...made.walkSkipped, ...made.result.skipped]),
    timestamp: made.timestamp,
    idempotency_key: made.idempotencyKey,
    key_fingerprint: made.keyFingerprint,
    ...(made.streamed ? { streamed: true } : {}),
  };
}

/**
 * The upload that runs while the archive is written, announced with the scan's fingerprint
 * once the scan has decided the archive is wanted (src/scout/upload/while-archiving.ts).
 */
function streamedUpload(
  station: { client: StationClient; target: UploadTarget },
  decided: Promise<Seen | null>,
  made: {
    announced: { timestamp: string; idempotency_key: string; key_fingerprint: string };
    file: string;
    ctx: OperationContext;
    onProgress: (done: number) => void;
  },
): StreamedUpload {
  return uploadWhileArchiving({
    ...station,
    announce: decided.then((seen) => {
      if (!seen) throw new Error('no archive is needed');
      if (seen.fingerprint === null) throw new Error(WALKED_ONCE);
      return announcement({ fingerprint: seen.fingerprint, ...made.announced }, station.target);
    }),
    path: made.file,
    signal: made.ctx.signal,
    onProgress: made.onProgress,
  });
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
  await deps.removal.settled();
  const key = deps.keys.current();
  const now = clock.now();
  const file = join(deps.stagingDir, `${config.job_name}-${now}-${randomBytes(4).toString('hex')}.tar.zst`);
  const fingerprints = archiveFingerprints(config.change_detection === 'mtimes');
  const walkSkipped: SkippedEntry[] = [];
  ctx.progress({ phase: 'archiving', bytes_done: 0, bytes_total: 0 });
  const timestamp = utcSecond(now);
  const streamKey = `${deps.instanceId}-${config.job_name}-s${randomBytes(8).toString('hex')}-${now}`;
  const verdict = scanVerdict(scan, wanted, ctx);
  const { decided, unwanted } = verdict;
  /** The upload's progress is the operation's (`reportUpload`), and its bytes sent so far. */
  let reporting = false;
  let sent = 0;
  /** The archive's fingerprints (every entry, without the incomplete, with mtimes), once its walk is done. */
  let digests: string[] | null = null;
  const digestsOnce = () => {
    digests ??= fingerprints.digests();
    return digests;
  };
  /** The streamed upload was told the archive's end as soon as it was written (onSealed). */
  let completed = false;
  const upload = station
    ? streamedUpload(station, decided, {
        announced: { timestamp, idempotency_key: streamKey, key_fingerprint: key.fingerprint },
        file,
        ctx,
        // Until the phase is `uploading` (reportUpload) the archive's own progress is shown.
        onProgress: (done) => {
          sent = done;
          if (reporting) ctx.progress({ bytes_done: done });
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
        filesExaminedByOpener: true,
      }),
      followSymlinks: config.follow_symlinks,
      xattrs: scan.xattrs,
      recipient: key.publicKey,
      outPath: file,
      signal,
      onProgress: (bytes) =>
        ctx.progress({ bytes_done: verdict.total > 0 ? Math.min(bytes, verdict.total) : bytes }),
      ...(upload ? { onWritten: upload.onWritten } : {}),
      // Every byte is written and the walk is done: an archive that is the one announced is
      // finalized while the staged file is fsynced (the Station fsyncs its copy meanwhile).
      onSealed: (end) => {
        if (!upload || !verdict.known || digestsOnce()[0] !== verdict.known.fingerprint) return;
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
  const announced = seen.fingerprint;
  const streamed = upload !== null && announced !== null && digestsOnce()[0] === announced;
  const staged = stagedRecord({
    file,
    result,
    digests: digestsOnce(),
    walkSkipped,
    timestamp,
    idempotencyKey: streamed
      ? streamKey
      : `${deps.instanceId}-${config.job_name}-${result.sha256.slice(0, 16)}-${now}`,
    keyFingerprint: key.fingerprint,
    streamed,
  });
  if (staged.skipped) log.warn({ job: config.job_name, ...staged.skipped }, 'the archive leaves entries out');
  if (upload && announced === null) await upload.abandon(new Error(WALKED_ONCE));
  else if (upload && !streamed) {
    log.info(
      { job: config.job_name },
      'the job changed while it was archived: sending it with its own fingerprint',
    );
    await upload.abandon(
      new Error('the archive is not the one announced (the job changed during the backup)'),
    );
  }
  await deps.states.update(job.relative_path, config.job_name, { staged });
  if (!completed) upload?.complete({ size: result.size, sha256: result.sha256 });
  const reportUpload = () => {
    if (!streamed) return 0;
    reporting = true;
    return sent;
  };
  return { staged, upload: streamed ? upload : null, reportUpload };
}
