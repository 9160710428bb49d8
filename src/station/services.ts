import type { StationConfig } from '../core/config.ts';
import type { Core } from '../core/core.ts';
import { createUploadAcceptance } from '../core/settings/upload-acceptance.ts';
import type { StationStorage } from './db/open.ts';
import { createStationSettings } from './services/station-settings.ts';

/** Everything the Station's routes call into. */
export function createStationServices(config: StationConfig, core: Core, storage: StationStorage) {
  return {
    config,
    core,
    storage,
    settings: createStationSettings(core.settings),
    uploads: createUploadAcceptance(core.settings),
  };
}

export type StationServices = ReturnType<typeof createStationServices>;
