import { type ScheduledTask, schedule } from 'node-cron';
import { clock } from '../../core/clock.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import { DRILL_ERROR_MAX } from '../../shared/protocol/drills.ts';
import type { ListedSnapshot } from '../../shared/protocol/recovery.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { snapshotFailure } from '../restore/snapshot-failure.ts';
import type { OperationContext, Runner } from '../schedule/runner.ts';
import type { JobCatalog } from '../services/job-catalog.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import type { DrillOutcome, JobStates } from '../state/job-states.ts';
import { createStationClient, StationError } from '../upload/station-client.ts';
import { stationNotConfigured } from '../upload/station-errors.ts';
import { readSnapshot } from './read-snapshot.ts';

const log = logger.child({ mod: 'scout/drill' });

/** Why a drill failed, in the words a restore of the snapshot would answer (snapshot-failure.ts). */
export function drillError(error: unknown): string {
  return snapshotFailure(error)?.message ?? (error instanceof Error ? error.message : String(error));
}

/**
 * Restore drills: per job, the newest snapshot on the Station is downloaded, decrypted,
 * decompressed and read to the end (nothing is written into the job) and its entries are
 * checked against the snapshot's job fingerprint. Runs as a cancellable operation of kind
 * `drill`, so never beside a backup or restore.
 */
export function createDrills(deps: {
  settings: ScoutSettingsService;
  keys: KeyStore;
  instanceId: string;
  catalog: JobCatalog;
  runner: Runner;
  states: JobStates;
  notifier?: Notifier;
}) {
  let lastStartedAt: number | null = null;
  let task: ScheduledTask | null = null;
  let expression = '';
  /** A scheduled drill that found a backup running retries each minute until it starts. */
  let retry: NodeJS.Timeout | null = null;

  function scheduled(): void {
    if (retry) return;
    const attempt = async () => {
      try {
        if ((await api.start()) === 'queued' && retry) {
          clearInterval(retry);
          retry = null;
        }
      } catch (error) {
        log.warn({ err: error }, 'scheduled restore drill not started');
        if (retry) clearInterval(retry);
        retry = null;
      }
    };
    retry = setInterval(() => void attempt(), 60_000);
    retry.unref();
    void attempt();
  }

  async function station() {
    const settings = await deps.settings.read();
    if (!settings.station_url || !settings.scout_credential) throw stationNotConfigured();
    const client = createStationClient(settings.station_url, settings.scout_credential);
    return { client: client.instance(settings.scout_id, deps.instanceId), scoutId: settings.scout_id };
  }

  /** Drills one job; null when the Station holds no snapshot of it (nothing to prove). */
  async function drillJob(job: DiscoveredJob, ctx: OperationContext): Promise<DrillOutcome | null> {
    const jobName = job.config?.job_name ?? '';
    const { client } = await station();
    ctx.progress({ job_name: jobName, phase: 'listing', bytes_done: 0, bytes_total: 0 });
    let newest: ListedSnapshot | undefined;
    let files = 0;
    let bytes = 0;
    try {
      newest = (await client.snapshots(jobName, ctx.signal))[0];
      if (!newest) return null;
      ctx.progress({ phase: 'downloading', bytes_total: newest.size_bytes });
      const snapshot = await client.download(jobName, { filename: newest.filename }, ctx.signal);
      ctx.progress({ phase: 'drilling' });
      const read = await readSnapshot({
        source: snapshot.body,
        keys: deps.keys.all(),
        signal: ctx.signal,
        onSourceBytes: (done) => ctx.progress({ bytes_done: done }),
      });
      files = read.files;
      bytes = read.bytes;
      const matches =
        newest.fingerprint.length === 64
          ? read.fingerprint === newest.fingerprint
          : read.fingerprint.startsWith(newest.fingerprint);
      if (!matches) {
        throw new Error(
          `the entries read (${read.files} files) do not match the snapshot's job fingerprint ${newest.fingerprint.slice(0, 8)} (read ${read.fingerprint.slice(0, 8)}): the snapshot does not hold what was backed up`,
        );
      }
      return outcome('ok', null);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (error instanceof StationError && error.status === 404 && !newest) return null;
      return outcome('failed', drillError(error));
    }

    function outcome(status: DrillOutcome['status'], error: string | null): DrillOutcome {
      return {
        filename: newest?.filename ?? '',
        status,
        files,
        bytes,
        // The Station takes at most DRILL_ERROR_MAX characters (src/shared/protocol/drills.ts).
        error: error === null ? null : error.slice(0, DRILL_ERROR_MAX),
        finished_at: clock.date().toISOString(),
      };
    }
  }

  /** Keeps the outcome, tells the Station and, when it failed, the operator. */
  async function record(job: DiscoveredJob, result: DrillOutcome): Promise<void> {
    const jobName = job.config?.job_name ?? '';
    await deps.states.update(job.relative_path, jobName, { lastDrill: JSON.stringify(result) });
    if (result.status === 'failed') {
      log.warn({ job: jobName, filename: result.filename, error: result.error }, 'restore drill failed');
      deps.notifier?.notify({
        event: 'drill_failed',
        source: 'drill',
        title: `Restore drill of ${jobName} failed`,
        summary: `the newest snapshot of ${jobName} (${result.filename || 'none'}) could not be proven restorable: ${result.error}`,
        priority: 'high',
        tags: ['x'],
        job_name: jobName,
      });
    } else {
      log.info({ job: jobName, filename: result.filename, files: result.files }, 'restore drill passed');
    }
    try {
      const { client } = await station();
      await client.reportDrill(jobName, result);
    } catch (error) {
      log.warn(
        { job: jobName, err: error },
        'cannot report the drill to the Station; it stays recorded here',
      );
    }
  }

  async function drillAll(jobs: DiscoveredJob[], ctx: OperationContext): Promise<void> {
    lastStartedAt = clock.now();
    for (const job of jobs) {
      ctx.signal.throwIfAborted();
      const result = await drillJob(job, ctx);
      ctx.signal.throwIfAborted();
      if (result) await record(job, result);
    }
  }

  const api = {
    /** (Re)schedules drills on `cron`; empty: never. */
    apply(cron: string): void {
      if (cron === expression) return;
      void task?.stop();
      task = null;
      expression = cron;
      if (cron !== '') task = schedule(cron, scheduled);
    },
    stop(): void {
      void task?.stop();
      task = null;
      expression = '';
      if (retry) clearInterval(retry);
      retry = null;
    },
    /** When the next scheduled drill is due (null: none scheduled). */
    nextRunAt: () => task?.getNextRun()?.toISOString() ?? null,
    /** Starts a drill of one job (its folder) or of every valid job; does not wait for it. */
    async start(relativePath?: string): Promise<'queued' | 'already_running'> {
      await station();
      let jobs: DiscoveredJob[];
      if (relativePath !== undefined) {
        const job = await deps.catalog.byPath(relativePath);
        if (!job) throw notFound(`no backup job at ${relativePath}`);
        if (!job.config) throw badRequest(`the job's marker is not valid: ${job.config_error}`);
        jobs = [job];
      } else {
        jobs = (await deps.catalog.refresh()).filter((j) => j.config !== null);
      }
      const jobName = jobs.length === 1 ? (jobs[0]?.config?.job_name ?? null) : null;
      return deps.runner.start('drill', jobName, (ctx) => drillAll(jobs, ctx));
    },
    lastStartedAt: () => lastStartedAt,
  };
  return api;
}

export type Drills = ReturnType<typeof createDrills>;
