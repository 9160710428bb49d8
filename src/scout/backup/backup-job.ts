import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { ErrorCode } from '../../shared/protocol/error-codes.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import type { OperationContext } from '../schedule/runner.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import { StationError } from '../upload/station-client.ts';
import { stationFailure } from '../upload/station-errors.ts';
import { mayStream, type UploadTarget, uploadStaged } from '../upload/uploader.ts';
import type { StreamedUpload } from '../upload/while-archiving.ts';
import { freshSnapshotDue } from './fresh-snapshot.ts';
import { type Seen, startScan } from './scan.ts';
import { type StageDeps, stageArchive } from './stage.ts';
import { type StationAccessDeps, stationFor } from './station-access.ts';
import type { Trigger } from './trigger.ts';

const log = logger.child({ mod: 'scout/backup' });

export type JobDeps = StageDeps &
  StationAccessDeps & {
    settings: ScoutSettingsService;
    advertisedUrl: string | undefined;
    /** Jobs whose last failure needs the operator (a token, a limit, a hook), not just a retry. */
    needsAttention: Set<string>;
  };

interface PassResult {
  /** Whether the Station was reached (for the circuit); null when no upload was tried. */
  reached: boolean | null;
  /** An archive staged by an earlier cycle was uploaded. */
  uploadedWaiting: boolean;
}

/**
 * Backs up one job; returns whether the Station was reached (for the circuit), or null if no
 * upload was tried. An archive staged by an earlier cycle goes first (it holds the files as
 * they were then); the job is then checked again, so what changed since is backed up in the
 * same cycle instead of the next.
 */
export async function backupJob(
  deps: JobDeps,
  job: DiscoveredJob,
  trigger: Trigger,
  ctx: OperationContext,
): Promise<boolean | null> {
  const first = await backupPass(deps, job, trigger, ctx, false);
  if (!first.uploadedWaiting || ctx.signal.aborted) return first.reached;
  const second = await backupPass(deps, job, trigger, ctx, true);
  return second.reached ?? first.reached;
}

/**
 * One pass over a job: fingerprint → unchanged, or archive (or reuse the staged one) → upload.
 * `again` is the second pass of a cycle whose first uploaded an archive staged by an earlier
 * one: it backs up what changed since, and leaves the state alone when nothing did.
 */
async function backupPass(
  deps: JobDeps,
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
      trigger !== 'force_send' && !due && seen.detected !== null && row?.storedFingerprint === seen.detected;
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
    let reportUpload = () => 0;
    if (!staged) {
      // A staged archive goes up as it is; otherwise the job is walked. The archive starts
      // beside that walk when it is likely wanted: it surely is (a first backup, force-send, a
      // fresh snapshot due), or someone waits for it (run-now); a scheduled cycle, which mostly
      // finds jobs unchanged, and a cycle's second pass wait for the walk first.
      const surely = row?.storedFingerprint == null || trigger === 'force_send' || due;
      const scan = startScan(job, ctx.signal, { wanted: surely });
      try {
        if (!surely && (trigger === 'schedule' || again) && unchangedBy(await scan.seen)) {
          scan.done(); // no archive to make: its xattrs are not needed
          return await unchanged();
        }
        // A new archive goes up while it is written when the upload could start now.
        const early = (await stationFor(deps, trigger, settings)).client;
        const station = early && mayStream(early) ? { client: early, target } : null;
        const made = await stageArchive(deps, job, scan, (seen) => !unchangedBy(seen), ctx, station);
        if (!made) return await unchanged();
        staged = made.staged;
        streaming = made.upload;
        reportUpload = made.reportUpload;
      } finally {
        scan.done();
      }
    }
    const refuse = async (message: string, attention: boolean, code: ErrorCode) => {
      if (attention) deps.needsAttention.add(job.relative_path);
      await deps.states.update(job.relative_path, name, {
        lastStatus: 'failed',
        lastError: message,
        lastErrorCode: code,
      });
    };
    const { client, blocked } = await stationFor(deps, trigger, settings);
    if (blocked) {
      // Paused while the archive was written: the streamed upload resumes in a later cycle.
      await streaming?.abandon(new Error(blocked.message));
      await refuse(blocked.message, blocked.attention, blocked.code);
      return { reached: null, uploadedWaiting: false };
    }
    ctx.progress({ phase: 'uploading', bytes_done: reportUpload(), bytes_total: staged.size });
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
      await deps.removal.remove(staged.file);
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
