import type { ScoutConfig } from '../core/config.ts';
import { createCore } from '../core/core.ts';
import { createCoreApp } from '../core/http/core-app.ts';
import { uploadPauseRoutes } from '../core/http/routes/upload-pause.ts';
import type { RunningRole } from '../core/server.ts';
import { openScoutStorage } from './db/open.ts';
import { statusRoutes } from './routes/status.ts';
import { createScoutServices } from './services.ts';

export async function startScout(config: ScoutConfig): Promise<RunningRole> {
  const storage = await openScoutStorage(config.dataDir);
  try {
    const core = createCore('scout', storage);
    await core.accounts.ensureInitialAdmin(config.initialAdminPassword);
    const scout = createScoutServices(config, core);
    const app = createCoreApp(core);
    app.route('/', statusRoutes(scout));
    app.route('/api/uploads', uploadPauseRoutes(scout.uploads));
    return { app, close: () => storage.close() };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
