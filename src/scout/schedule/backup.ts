import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clock, DAY_MS } from '../../core/clock.ts';
import type { Hooks } from '../../core/hooks/hooks.ts';
import { logger } from '../../core/log.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import type { ErrorCode } from '../../shared/protocol/error-codes.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';
import { writeArchive } from '../archive/pipeline.ts';
import { scanXattrs, type XattrMap } from '../archive/xattr-scan.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { describeSkipped, summarizeSkipped } from '../jobs/skipped.ts';
import { type EntryOutcome, type SkippedEntry, walkJob } from '../jobs/walk.ts';
import { WalkFingerprints } from '../jobs/walk-fingerprints.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import { type JobStates, stateView } from '../state/job-states.ts';
import type { Circuit } from '../upload/circuit.ts';
import { createStationClient, type StationClient, StationError } from '../upload/station-client.ts';
import { stationFailure } from '../upload/station-errors.ts';
import {
  announcement,
  mayStream,
  type StagedArchive,
  type UploadTarget,
  uploadStaged,
} from '../upload/uploader.ts';
import { type StreamedUpload, uploadWhileArchiving } from '../upload/while-archiving.ts';
import type { OperationContext } from './runner.ts';

const log = logger.child({ mod: 'scout/backup' });

export type Trigger = 'schedule' | 'run_now' | 'force_send';

/** What the scan's walk found: the fingerprint to announce, the one change detection compares, the bytes. */
interface Seen {
  fingerprint: string;
  detected: string;
  total: number;
}

/** A scan under way (startScan): its walk's result, the extended attributes, and a way to stop both. */
interface Scan {
  seen: Promise<Seen>;
  xattrs: () => Promise<XattrMap>;
  done: () => void;
}

interface PassResult {
  /** Whether the Station was reached (for the circuit); null when no upload was tried. */
  reached: boolean | null;
  /** An archive staged by an earlier cycle was uploaded. */
  uploadedWaiting: boolean;
}

/**
 * Whether a job's newest snapshot (taken when its stored name says) is `everyDays` old or
 * older, so the cycle packs a fresh one even if the fingerprint did not change: sizes do not
 * change with every edit (force_send_every_days; 0 = never).
 */
export function freshSnapshotDue(lastStoredAs: string | null, everyDays: number, now: number): boolean {
  if (everyDays <= 0 || lastStoredAs === null) return false;
  const takenAt = parseSnapshotName(lastStoredAs)?.takenAt ?? null;
  return takenAt !== null && now - takenAt >= everyDays * DAY_MS;
}

/** The backup cycle: per job, fingerprint → unchanged, or archive (or reuse the staged one) → upload. */
export function createBackup(deps: {
  dataDir: string;
  instanceId: string;
  advertisedUrl: string | undefined;
  keys: KeyStore;
  settings: ScoutSettingsService;
  states: JobStates;
  circuit: Circuit;
  uploadsPaused: () => Promise<boolean>;
  jobs: () => Promise<DiscoveredJob[]>;
  hooks: Hooks;
  notifier: Notifier;
  /** The Station client to upload with (tests pass a fake one). */
  stationClient?: typeof createStationClient;
  /** The archive pipeline (tests wrap it to act at a given point of an archive). */
  archiver?: typeof writeArchive;
}) {
  const connect = deps.stationClient ?? createStationClient;
  const archive = deps.archiver ?? writeArchive;
  const stagingDir = join(deps.dataDir, 'staging');
  /** Jobs whose last failure needs the operator (a token, a limit, a hook), not just a retry. */
  const needsAttention = new Set<string>();

  /**
   * Starts walking the job for its fingerprint (what a streamed upload announces), its
   * change-detection fingerprint and its size, holding no list of its entries; its extended
   * attributes are listed meanwhile by another process (only an archive needs them: `xattrs()`
   * waits for them). Nothing is awaited here: the archive may start beside the walk (stage).
   * `done()` stops whatever still runs of both.
   */
  function startScan(job: DiscoveredJob, signal: AbortSignal): Scan {
    const stop = new AbortController();
    const config = job.config;
    const both = AbortSignal.any([signal, stop.signal]);
    const listing = config
      ? scanXattrs(job.absolute_path, { followSymlinks: config.follow_symlinks, signal: both })
      : Promise.resolve(new Map() as XattrMap);
    listing.catch(() => {}); // awaited by xattrs(), or abandoned by done()
    const seen = (async (): Promise<Seen> => {
      if (!config) return { fingerprint: '', detected: '', total: 0 };
      // What change detection compares: with `change_detection: mtimes`, modification times count.
      const mtimes = config.change_detection === 'mtimes';
      const fingerprints = new WalkFingerprints([{}, ...(mtimes ? [{ mtimes }] : [])]);
      let total = 0;
      for await (const entry of walkJob(job.absolute_path, config, { signal: both, fingerprints }))
        if (entry.type === 'file') total += entry.size;
      const [plain = '', withTimes] = fingerprints.digests();
      return { fingerprint: plain, detected: withTimes ?? plain, total };
    })();
    seen.catch(() => stop.abort()); // awaited by the cycle; a failed walk stops the listing too
    return { seen, xattrs: () => listing, done: () => stop.abort() };
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
   * not (the job did not change), the archive stops, nothing stays staged and stage answers
   * null. With `station`, the upload runs while the archive is written (a streamed upload,
   * src/scout/upload/while-archiving.ts), initiated once the scan is done, announced with its
   * fingerprint; the chunks written meanwhile go first. An archive whose own fingerprint
   * differs (entries changed, appeared or went between the scan's walk and the archive's) is
   * not what was announced: that upload is abandoned and the staged archive goes up afterwards
   * as a plain upload, declaring the archive's own fingerprint.
   */
  async function stage(
    job: DiscoveredJob,
    scan: Scan,
    wanted: (seen: Seen) => boolean,
    ctx: OperationContext,
    station: { client: StationClient; target: UploadTarget } | null,
  ): Promise<{ staged: StagedArchive; upload: StreamedUpload | null } | null> {
    const config = job.config;
    if (!config) throw new Error('job without a valid config');
    await mkdir(stagingDir, { recursive: true });
    const key = deps.keys.current();
    const now = clock.now();
    const file = join(stagingDir, `${config.job_name}-${now}-${randomBytes(4).toString('hex')}.tar.zst`);
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
    let result: Awaited<ReturnType<typeof writeArchive>>;
    let seen: Seen | null;
    try {
      const signal = AbortSignal.any([ctx.signal, unwanted.signal]);
      result = await archive({
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

  /** A client of the Station when the job's archive can go up now, else why it cannot. */
  async function stationFor(
    trigger: Trigger,
    settings: { station_url: string | null; scout_credential: string | null },
  ): Promise<
    | { client: StationClient; blocked: null }
    | { client: null; blocked: { message: string; attention: boolean; code: ErrorCode } }
  > {
    const blocked = (why: { message: string; attention: boolean; code: ErrorCode }) => ({
      client: null,
      blocked: why,
    });
    if (await deps.uploadsPaused()) {
      return blocked({
        message: 'uploads are paused on this Scout; resume them to upload the staged archive',
        attention: false,
        code: 'paused',
      });
    }
    if (!settings.station_url || !settings.scout_credential) {
      return blocked({
        message:
          'no Station is set: enter the Station URL and a Station token in Settings (station_url, scout_credential)',
        attention: true,
        code: 'not_configured',
      });
    }
    if (trigger === 'schedule' && deps.circuit.blocksScheduled()) {
      const { retry_at } = deps.circuit.view();
      return blocked({
        message: `the Station was unreachable for several cycles; uploads resume at ${retry_at} or on run-now`,
        attention: false,
        code: 'station_unreachable',
      });
    }
    return { client: connect(settings.station_url, settings.scout_credential), blocked: null };
  }

  /**
   * One pass over a job: fingerprint → unchanged, or archive (or reuse the staged one) → upload.
   * `again` is the second pass of a cycle whose first uploaded an archive staged by an earlier
   * one: it backs up what changed since, and leaves the state alone when nothing did.
   */
  async function backupPass(
    job: DiscoveredJob,
    trigger: Trigger,
    ctx: OperationContext,
    again: boolean,
  ): Promise<PassResult> {
    const config = job.config;
    if (!config) return { reached: null, uploadedWaiting: false };
    const name = config.job_name;
    const now = clock.now();
    const row = await deps.states.get(job.relative_path);
    if (!again)
      await deps.states.update(job.relative_path, name, { lastStatus: 'running', lastAttemptAt: now });
    ctx.progress({ job_name: name, phase: 'scanning', bytes_done: 0, bytes_total: 0 });
    try {
      let staged = deps.states.staged(row);
      const waiting = staged !== null;
      const settings = await deps.settings.read();
      const due = freshSnapshotDue(row?.lastStoredAs ?? null, settings.force_send_every_days, now);
      /** Whether the scan finds the job as it was last stored (nothing to archive). */
      const unchangedBy = (seen: Seen) =>
        trigger !== 'force_send' && !due && row?.storedFingerprint === seen.detected;
      const unchanged = async () => {
        if (again) return { reached: null, uploadedWaiting: false };
        await deps.states.update(job.relative_path, name, {
          lastStatus: 'unchanged',
          lastError: null,
          lastErrorCode: null,
          lastSuccessAt: now,
        });
        return { reached: null, uploadedWaiting: false };
      };
      if (due && !staged) log.info({ job: name, days: settings.force_send_every_days }, 'fresh snapshot due');
      const target: UploadTarget = {
        scoutId: settings.scout_id,
        instanceId: deps.instanceId,
        jobName: name,
        advertisedUrl: deps.advertisedUrl,
      };
      let streaming: StreamedUpload | null = null;
      if (!staged) {
        // A staged archive goes up as it is; otherwise the job is walked. The archive starts
        // beside that walk when it is likely wanted: it surely is (a first backup, force-send, a
        // fresh snapshot due), or someone waits for it (run-now); a scheduled cycle, which mostly
        // finds jobs unchanged, and a cycle's second pass wait for the walk first.
        const scan = startScan(job, ctx.signal);
        try {
          const surely = row?.storedFingerprint == null || trigger === 'force_send' || due;
          if (!surely && (trigger === 'schedule' || again) && unchangedBy(await scan.seen)) {
            scan.done(); // no archive to make: its xattrs are not needed
            return await unchanged();
          }
          // A new archive goes up while it is written when the upload could start now.
          const early = (await stationFor(trigger, settings)).client;
          const station = early && mayStream(early) ? { client: early, target } : null;
          const made = await stage(job, scan, (seen) => !unchangedBy(seen), ctx, station);
          if (!made) return await unchanged();
          staged = made.staged;
          streaming = made.upload;
        } finally {
          scan.done();
        }
      }
      const refuse = async (message: string, attention: boolean, code: ErrorCode) => {
        if (attention) needsAttention.add(job.relative_path);
        await deps.states.update(job.relative_path, name, {
          lastStatus: 'failed',
          lastError: message,
          lastErrorCode: code,
        });
      };
      const { client, blocked } = await stationFor(trigger, settings);
      if (blocked) {
        // Paused while the archive was written: the streamed upload resumes in a later cycle.
        await streaming?.abandon(new Error(blocked.message));
        await refuse(blocked.message, blocked.attention, blocked.code);
        return { reached: null, uploadedWaiting: false };
      }
      ctx.progress({ phase: 'uploading', bytes_done: 0, bytes_total: staged.size });
      try {
        const stored = streaming
          ? await streaming.result()
          : await uploadStaged({
              client,
              staged,
              target,
              signal: ctx.signal,
              onProgress: (done) => ctx.progress({ bytes_done: done }),
            });
        await rm(staged.file, { force: true });
        await deps.states.update(job.relative_path, name, {
          lastStatus: 'uploaded',
          lastError: null,
          lastErrorCode: null,
          lastSuccessAt: clock.now(),
          lastStoredAs: stored.stored_as,
          lastStoredBytes: staged.size,
          storedFingerprint: staged.change_fingerprint ?? staged.retry_fingerprint ?? staged.fingerprint,
          lastSkipped: staged.skipped ?? null,
          staged: null,
        });
        log.info({ job: name, stored_as: stored.stored_as, bytes: staged.size }, 'job uploaded');
        return { reached: true, uploadedWaiting: waiting };
      } catch (error) {
        if (!(error instanceof StationError)) throw error;
        const failure = stationFailure(error, 'upload');
        await refuse(failure.message, failure.attention, failure.code);
        return { reached: failure.reached, uploadedWaiting: false };
      }
    } catch (error) {
      if (ctx.signal.aborted) {
        await deps.states.update(job.relative_path, name, {
          lastStatus: 'cancelled',
          lastError: 'cancelled by the operator; a staged archive is kept for the next cycle',
          lastErrorCode: null,
        });
        throw error;
      }
      const message = `backup failed: ${(error as Error).message}`;
      log.error({ err: error, job: name }, 'job failed');
      await deps.states.update(job.relative_path, name, {
        lastStatus: 'failed',
        lastError: message,
        lastErrorCode: 'internal',
      });
      return { reached: null, uploadedWaiting: false };
    }
  }

  /**
   * Backs up one job; returns whether the Station was reached (for the circuit), or null if no
   * upload was tried. An archive staged by an earlier cycle goes first (it holds the files as
   * they were then); the job is then checked again, so what changed since is backed up in the
   * same cycle instead of the next.
   */
  async function backupJob(
    job: DiscoveredJob,
    trigger: Trigger,
    ctx: OperationContext,
  ): Promise<boolean | null> {
    const first = await backupPass(job, trigger, ctx, false);
    if (!first.uploadedWaiting || ctx.signal.aborted) return first.reached;
    const second = await backupPass(job, trigger, ctx, true);
    return second.reached ?? first.reached;
  }

  /** Runs the pre-hook (a failure skips the job), the job, the post-hook, and notifies on failure. */
  async function hookedJob(
    job: DiscoveredJob,
    trigger: Trigger,
    ctx: OperationContext,
  ): Promise<boolean | null> {
    const name = job.config?.job_name ?? '';
    const settings = await deps.settings.read();
    const facts = {
      event: 'backup',
      job_name: name,
      relative_path: job.relative_path,
      trigger,
      scout_id: settings.scout_id,
      scout_instance_id: deps.instanceId,
    };
    needsAttention.delete(job.relative_path);
    let reached: boolean | null = null;
    const pre = await deps.hooks.pre(facts);
    if (pre.ran && pre.exit_code !== 0) {
      const outcome = pre.timed_out
        ? 'timed out'
        : pre.start_error
          ? `could not start (${pre.start_error})`
          : `exited with ${pre.exit_code}`;
      needsAttention.add(job.relative_path);
      await deps.states.update(job.relative_path, name, {
        lastStatus: 'failed',
        lastAttemptAt: clock.now(),
        lastErrorCode: 'hook_failed',
        // The output is not kept (src/core/hooks/hooks.ts): its size tells whether there was any.
        lastError: `the pre-backup hook (hook_pre_command) ${outcome}, so the job was skipped; fix the hook or its cause (it wrote ${pre.output_bytes} bytes of output, which backupd does not keep: send it to a file in the command to read it)`,
      });
    } else {
      reached = await backupJob(job, trigger, ctx);
    }
    const state = await deps.states.get(job.relative_path);
    await deps.hooks.post({
      ...facts,
      status: state?.lastStatus ?? 'failed',
      stored_as: state?.lastStoredAs ?? '',
      error: state?.lastError ?? '',
    });
    const skipped = stateView(state).last_skipped;
    if (state?.lastStatus === 'uploaded' && skipped) {
      deps.notifier.notify({
        ...facts,
        event: 'job_incomplete',
        source: 'backup',
        title: `Backup of ${name} is incomplete`,
        summary: `${name} on ${settings.scout_id}: snapshot ${state.lastStoredAs ?? ''} stored, but ${describeSkipped(skipped)}`,
        tags: ['warning'],
        skipped_count: skipped.count,
        skipped_paths: skipped.paths,
      });
    }
    if (state?.lastStatus === 'failed') {
      const attention = needsAttention.has(job.relative_path);
      deps.notifier.notify({
        ...facts,
        event: attention ? 'job_needs_attention' : 'job_failed',
        source: 'backup',
        title: attention ? `Backup of ${name} needs you` : `Backup of ${name} failed`,
        summary: `${name} on ${settings.scout_id}: ${state.lastError ?? 'failed'}`,
        priority: 'high',
        tags: attention ? ['warning'] : ['x'],
        error: state.lastError ?? '',
      });
    }
    return reached;
  }

  function noteReach(results: (boolean | null)[]): void {
    if (results.some((r) => r === true)) deps.circuit.reached();
    else if (results.some((r) => r === false)) deps.circuit.cycleFailedToReach();
  }

  return {
    /** A cycle over every job, or over `only` (one job's "Back up now"). */
    async cycle(trigger: Trigger, ctx: OperationContext, only?: DiscoveredJob[]): Promise<void> {
      const results: (boolean | null)[] = [];
      for (const job of only ?? (await deps.jobs())) {
        if (ctx.signal.aborted) break;
        results.push(await hookedJob(job, trigger, ctx));
      }
      noteReach(results);
    },
    async forceSend(job: DiscoveredJob, ctx: OperationContext): Promise<void> {
      noteReach([await hookedJob(job, 'force_send', ctx)]);
    },
    stagingDir,
  };
}

export type Backup = ReturnType<typeof createBackup>;
