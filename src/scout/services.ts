import type { ScoutConfig } from '../core/config.ts';
import type { Core } from '../core/core.ts';
import { createUploadAcceptance } from '../core/settings/upload-acceptance.ts';
import { loadInstanceId } from './services/instance-id.ts';
import { createScoutSettings } from './services/scout-settings.ts';

/** Everything the Scout's routes call into. */
export function createScoutServices(config: ScoutConfig, core: Core) {
  return {
    config,
    core,
    instanceId: loadInstanceId(config.dataDir),
    settings: createScoutSettings(core.settings, config),
    uploads: createUploadAcceptance(core.settings),
  };
}

export type ScoutServices = ReturnType<typeof createScoutServices>;
