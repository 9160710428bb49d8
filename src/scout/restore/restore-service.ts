import { badRequest, notFound } from '../../core/errors.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import {
  FINGERPRINT_RULE,
  isFingerprint,
  isSnapshotFilename,
  SNAPSHOT_FILENAME_RULE,
} from '../../shared/protocol/fields.ts';
import {
  ANSWERED_PROBLEMS,
  type ListedSnapshot,
  type RestoreProblemView,
  type SnapshotChoice,
} from '../../shared/protocol/recovery.ts';
import type {
  AlreadyRunning,
  JobSnapshotList,
  RestoreOutcome,
  RestorePreview,
} from '../../shared/protocol/scout-recovery.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { OperationContext, Runner } from '../schedule/runner.ts';
import type { JobCatalog } from '../services/job-catalog.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import { createStationClient } from '../upload/station-client.ts';
import { stationNotConfigured } from '../upload/station-errors.ts';
import { chosenPaths, destinationFolder, SelectionError } from './restore-selection.ts';
import { withRoomForOldGeneration } from './restore-v8-settings.ts';
import { type RestorePlan, restoreArchive, UnsafeEntryError } from './restorer.ts';
import { assertDestination } from './safe-tree.ts';
import { snapshotFailure } from './snapshot-failure.ts';

export type { ListedSnapshot, SnapshotChoice };

/** Which snapshot, which of its entries and where: the body of preview and restore. */
export interface RestoreChoice extends SnapshotChoice {
  /** Paths relative to the job folder (escaped names); the whole snapshot when absent. */
  paths?: string[] | undefined;
  /** An absolute folder on the host; the job folder when absent. */
  destination?: string | undefined;
}

/** Where a restore writes: `destination` (checked) or the job folder, and the scan root it lies in. */
function restoreTarget(choice: RestoreChoice, jobFolder: string, scanRoot: string) {
  let dest = jobFolder;
  let paths: string[] | undefined;
  try {
    if (choice.paths !== undefined) paths = chosenPaths(choice.paths, 'paths');
    if (choice.destination !== undefined) dest = destinationFolder(choice.destination, 'destination');
  } catch (error) {
    if (error instanceof SelectionError) throw badRequest(error.message);
    throw error;
  }
  const root = scanRoot.replace(/\/+$/, '');
  // Inside the scan root no folder on the way may be a symlink (as for the job folder itself).
  const within = dest === root || dest.startsWith(`${root}/`) ? root : undefined;
  try {
    assertDestination(dest, within);
  } catch (error) {
    if (error instanceof UnsafeEntryError) throw badRequest(`destination: ${error.message}`);
    throw error;
  }
  return { dest, within, paths };
}

/** Turns what can go wrong in a restore into an answer that says what to do (snapshot-failure.ts). */
export function restoreFailure(error: unknown): unknown {
  return snapshotFailure(error) ?? error;
}

/** A restore's problems in an answer: the count and the first ANSWERED_PROBLEMS. */
export function problemsAnswer(plan: RestorePlan): { problem_count: number; problems: RestoreProblemView[] } {
  return { problem_count: plan.problemCount, problems: plan.problems.slice(0, ANSWERED_PROBLEMS) };
}

/** ", 2 entries with problems: a: …; b: …" for a summary (the first three), or ''. */
export function problemsSummary(plan: RestorePlan): string {
  if (plan.problemCount === 0) return '';
  const first = plan.problems
    .slice(0, 3)
    .map((p) => `${p.path}: ${p.message}`)
    .join('; ');
  const more = plan.problemCount > 3 ? '; …' : '';
  return `, ${plan.problemCount} ${plan.problemCount === 1 ? 'entry' : 'entries'} with problems: ${first}${more}`;
}

/** Counts a restore's problems in its operation state (`/api/status` `operation.problems`). */
export function problemCounter(ctx: OperationContext): () => void {
  let problems = 0;
  return () => {
    problems += 1;
    ctx.progress({ problems });
  };
}

/** A notification about a restore's outcome (never blocks or fails the restore). */
export function restoreNotice(
  notifier: Notifier | undefined,
  event: 'restore_completed' | 'restore_failed',
  jobName: string,
  summary: string,
  withProblems = false,
): void {
  const title =
    event === 'restore_failed'
      ? `Restore of ${jobName} failed`
      : withProblems
        ? `Restore of ${jobName} completed with problems`
        : `Restore of ${jobName} completed`;
  notifier?.notify({
    event,
    source: 'restore',
    title,
    summary,
    priority: event === 'restore_failed' || withProblems ? 'high' : 'default',
    tags: event === 'restore_failed' ? ['x'] : withProblems ? ['warning'] : ['white_check_mark'],
    job_name: jobName,
  });
}

/** Preview and restore of a job's snapshot from the Station, one operation at a time. */
export function createRestores(deps: {
  settings: ScoutSettingsService;
  keys: KeyStore;
  instanceId: string;
  catalog: JobCatalog;
  runner: Runner;
  notifier?: Notifier;
}) {
  /** This instance's client of the Station. */
  async function station() {
    const settings = await deps.settings.read();
    if (!settings.station_url || !settings.scout_credential) throw stationNotConfigured();
    return createStationClient(settings.station_url, settings.scout_credential).instance(
      settings.scout_id,
      deps.instanceId,
    );
  }

  async function download(jobName: string, choice: SnapshotChoice, ctx: OperationContext) {
    const client = await station();
    ctx.progress({ phase: 'downloading' });
    return client.download(jobName, choice, ctx.signal);
  }

  async function jobAt(relativePath: string) {
    const job = await deps.catalog.byPath(relativePath);
    if (!job) throw notFound(`no backup job at ${relativePath}`);
    if (!job.config) throw badRequest(`the job's marker is not valid: ${job.config_error}`);
    return { job, jobName: job.config.job_name };
  }

  async function run(relativePath: string, choice: RestoreChoice, dryRun: boolean) {
    const fp = choice.fingerprint ?? '';
    if (fp !== '' && !isFingerprint(fp))
      throw badRequest(`fingerprint must be empty, or ${FINGERPRINT_RULE}`);
    if (choice.filename !== undefined && !isSnapshotFilename(choice.filename))
      throw badRequest(`filename must be ${SNAPSHOT_FILENAME_RULE}`);
    if (fp !== '' && choice.filename) throw badRequest('give a fingerprint or a filename, not both');
    const { job, jobName } = await jobAt(relativePath);
    const { dest, within, paths } = restoreTarget(choice, job.absolute_path, deps.catalog.scanRoot);
    const keys: ScoutKey[] = deps.keys.all();
    const outcome = await deps.runner.run('restore', jobName, async (ctx) => {
      try {
        const snapshot = await download(jobName, { fingerprint: fp, filename: choice.filename }, ctx);
        ctx.progress({ phase: dryRun ? 'previewing' : 'restoring', bytes_total: snapshot.size });
        // V8 would mark the Scout's small heap again right after each full collection.
        const plan = await withRoomForOldGeneration(() =>
          restoreArchive({
            source: snapshot.body,
            keys,
            dest,
            // A folder on the way from the scan root swapped for a link is refused, not followed.
            within,
            paths,
            dryRun,
            // A preview names every file; a restore only counts them (a million names are ~100 MiB).
            listFiles: dryRun,
            signal: ctx.signal,
            onSourceBytes: (bytes) => ctx.progress({ bytes_done: bytes }),
            onProblem: problemCounter(ctx),
          }),
        );
        if (!dryRun)
          restoreNotice(
            deps.notifier,
            'restore_completed',
            jobName,
            `${snapshot.filename} restored into ${dest === job.absolute_path ? relativePath : dest}: ${plan.counts.add} added, ${plan.counts.replace} replaced, ${plan.counts.unchanged} unchanged${problemsSummary(plan)}`,
            plan.problemCount > 0,
          );
        return { snapshot: snapshot.filename, plan, dest };
      } catch (error) {
        const failure = restoreFailure(error);
        if (!dryRun)
          restoreNotice(
            deps.notifier,
            'restore_failed',
            jobName,
            `restore of ${relativePath} failed: ${(failure as Error).message}`,
          );
        throw failure;
      }
    });
    return outcome;
  }

  return {
    /** The job's snapshots on the Station, newest first (asks the Station each time). */
    async snapshots(relativePath: string): Promise<JobSnapshotList> {
      const { jobName } = await jobAt(relativePath);
      const client = await station();
      try {
        return { job_name: jobName, snapshots: await client.snapshots(jobName) };
      } catch (error) {
        throw restoreFailure(error);
      }
    },
    async preview(
      relativePath: string,
      choice: RestoreChoice = {},
    ): Promise<RestorePreview | AlreadyRunning> {
      const outcome = await run(relativePath, choice, true);
      if (outcome.status === 'already_running') return { status: 'already_running' };
      const { snapshot, plan } = outcome.result;
      return {
        snapshot,
        add: plan.add,
        replace: plan.replace,
        unchanged: plan.unchanged,
        add_count: plan.counts.add,
        replace_count: plan.counts.replace,
        unchanged_count: plan.counts.unchanged,
        bytes: plan.bytes,
        ...problemsAnswer(plan),
      };
    },
    async restore(
      relativePath: string,
      choice: RestoreChoice = {},
    ): Promise<RestoreOutcome | AlreadyRunning> {
      const outcome = await run(relativePath, choice, false);
      if (outcome.status === 'already_running') return { status: 'already_running' };
      const { snapshot, plan, dest } = outcome.result;
      return {
        status: 'restored',
        snapshot,
        added: plan.counts.add,
        replaced: plan.counts.replace,
        unchanged: plan.counts.unchanged,
        destination: dest,
        bytes: plan.bytes,
        ...problemsAnswer(plan),
      };
    },
  };
}

export type Restores = ReturnType<typeof createRestores>;
