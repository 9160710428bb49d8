import { join } from 'node:path';
import type { Hooks } from '../../core/hooks/hooks.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import { writeArchive } from '../archive/pipeline.ts';
import { createArchiveRemoval } from '../backup/archive-removal.ts';
import { type HookedJobDeps, hookedJob } from '../backup/hooked-job.ts';
import type { Trigger } from '../backup/trigger.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import type { JobStates } from '../state/job-states.ts';
import type { Circuit } from '../upload/circuit.ts';
import { createStationClient } from '../upload/station-client.ts';
import type { OperationContext } from './runner.ts';

export { freshSnapshotDue } from '../backup/fresh-snapshot.ts';
export type { Trigger };

/**
 * The backup cycle: per job, fingerprint → unchanged, or archive (or reuse the staged one) →
 * upload. Its steps live in src/scout/backup/: the scan (scan.ts), the archive staged beside it
 * (stage.ts), whether the Station can be reached (station-access.ts), one job's passes
 * (backup-job.ts), and the hooks and notifications around them (hooked-job.ts).
 */
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
  const stagingDir = join(deps.dataDir, 'staging');
  const removal = createArchiveRemoval(deps.dataDir);
  const steps: HookedJobDeps = {
    ...deps,
    stagingDir,
    removal,
    connect: deps.stationClient ?? createStationClient,
    archiver: deps.archiver ?? writeArchive,
    needsAttention: new Set<string>(),
  };

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
        results.push(await hookedJob(steps, job, trigger, ctx));
      }
      noteReach(results);
    },
    async forceSend(job: DiscoveredJob, ctx: OperationContext): Promise<void> {
      noteReach([await hookedJob(steps, job, 'force_send', ctx)]);
    },
    stagingDir,
    removal,
  };
}

export type Backup = ReturnType<typeof createBackup>;
