import type { ScoutConfig } from '../core/config.ts';
import type { Core } from '../core/core.ts';
import { createIntegrations } from '../core/integrations.ts';
import { releaseAfterWork } from '../core/release-memory.ts';
import { createUploadAcceptance } from '../core/settings/upload-acceptance.ts';
import type { ScoutStorage } from './db/open.ts';
import { createDrills } from './drill/drills.ts';
import { createKeySaved } from './keys/key-saved.ts';
import { createKeyStore } from './keys/key-store.ts';
import { createRequestDecisions } from './restore/request-decisions.ts';
import { createRestores } from './restore/restore-service.ts';
import { createBackup } from './schedule/backup.ts';
import { createRunner } from './schedule/runner.ts';
import { createScheduler } from './schedule/scheduler.ts';
import { loadInstanceId } from './services/instance-id.ts';
import { createJobCatalog } from './services/job-catalog.ts';
import { notifyLostClaim } from './services/lost-claim.ts';
import { createScoutSettings } from './services/scout-settings.ts';
import { createJobStates } from './state/job-states.ts';
import { createCircuit } from './upload/circuit.ts';
import { dropSpareBlocks } from './upload/file-put.ts';

/** Everything the Scout's routes call into. */
export function createScoutServices(config: ScoutConfig, core: Core, storage: ScoutStorage) {
  const instanceId = loadInstanceId(config.dataDir, config.adoptInstanceId);
  const settings = createScoutSettings(core.settings, config);
  const uploads = createUploadAcceptance(core.settings);
  const keys = createKeyStore(config.dataDir);
  const states = createJobStates(storage.scoutDb);
  const integrations = createIntegrations('scout', config.dataDir, core.settings);
  const catalog = createJobCatalog(config.scanRoot, {
    history: async () => ({ ranAs: await states.names(), ownUid: process.getuid?.() ?? null }),
    onLostClaim: (job) => notifyLostClaim(job, settings, integrations.notifier),
  });
  const circuit = createCircuit();
  const runner = createRunner({
    afterEach: () => {
      dropSpareBlocks();
      releaseAfterWork();
    },
  });
  const backup = createBackup({
    dataDir: config.dataDir,
    instanceId,
    advertisedUrl: config.advertisedUrl,
    keys,
    settings,
    states,
    circuit,
    uploadsPaused: () => uploads.paused(),
    jobs: async () => (await catalog.refresh()).filter((j) => j.config !== null),
    hooks: integrations.hooks,
    notifier: integrations.notifier,
  });
  return {
    config,
    core,
    instanceId,
    settings,
    uploads,
    keys,
    keySaved: createKeySaved(core.settings, keys),
    states,
    catalog,
    circuit,
    runner,
    backup,
    scheduler: createScheduler({ runner, backup }),
    integrations,
    restores: createRestores({
      settings,
      keys,
      instanceId,
      catalog,
      runner,
      notifier: integrations.notifier,
    }),
    drills: createDrills({
      settings,
      keys,
      instanceId,
      catalog,
      runner,
      states,
      notifier: integrations.notifier,
    }),
    decisions: createRequestDecisions({
      settings,
      keys,
      instanceId,
      runner,
      scanRoot: config.scanRoot,
      notifier: integrations.notifier,
    }),
  };
}

export type ScoutServices = ReturnType<typeof createScoutServices>;
