import type { StationConfig } from '../core/config.ts';
import { createCore } from '../core/core.ts';
import { createCoreApp } from '../core/http/core-app.ts';
import type { RunningRole } from '../core/server.ts';
import { openStationStorage } from './db/open.ts';
import { healthRoutes } from './routes/health.ts';
import { settingsRoutes } from './routes/settings.ts';
import { ensureFolders } from './services/storage-health.ts';
import { createStationServices } from './services.ts';

/** Downloads are not counted by the general API rate limit. */
const isDownload = (method: string, path: string) => method === 'GET' && path.startsWith('/api/snapshots/');

export async function startStation(config: StationConfig): Promise<RunningRole> {
  await ensureFolders(config.backupRoot, config.stagingDir);
  const storage = await openStationStorage(config);
  try {
    const core = createCore('station', storage);
    await core.accounts.ensureInitialAdmin(config.initialAdminPassword);
    const station = createStationServices(config, core, storage);
    const app = createCoreApp(core, { rateLimitExempt: isDownload });
    app.route('/', healthRoutes(station));
    app.route('/api', settingsRoutes(station));
    return { app, close: () => storage.close() };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
