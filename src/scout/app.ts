import type { ScoutConfig } from '../core/config.ts';
import { createCore } from '../core/core.ts';
import { createCoreApp } from '../core/http/core-app.ts';
import { integrationRoutes } from '../core/http/routes/integrations.ts';
import { metricsRoutes } from '../core/http/routes/metrics.ts';
import { uploadPauseRoutes } from '../core/http/routes/upload-pause.ts';
import { webUiRoutes } from '../core/http/web/web-ui.ts';
import { logger } from '../core/log.ts';
import type { RunningRole } from '../core/server.ts';
import { API_ROOTS } from '../shared/protocol/api-paths.ts';
import { openScoutStorage } from './db/open.ts';
import { directoryRoutes } from './routes/directories.ts';
import { drillRoutes } from './routes/drills.ts';
import { encryptionKeyRoutes } from './routes/encryption-key.ts';
import { recoveryRoutes } from './routes/recovery.ts';
import { restoreRequestRoutes } from './routes/restore-requests.ts';
import { statusRoutes } from './routes/status.ts';
import { createJobAdmin } from './services/job-admin.ts';
import { createScoutMetrics } from './services/scout-metrics.ts';
import { createScoutServices } from './services.ts';
import { sweepStaging } from './state/staging-sweep.ts';

const log = logger.child({ mod: 'scout/app' });

export async function startScout(config: ScoutConfig): Promise<RunningRole> {
  const storage = await openScoutStorage(config.dataDir);
  try {
    const core = createCore('scout', storage);
    await core.accounts.ensureInitialAdmin(config.initialAdminPassword);
    const scout = createScoutServices(config, core, storage);
    await scout.integrations.certificates.apply();
    const app = createCoreApp(core, { allowedHosts: config.allowedHosts, trustProxy: config.trustProxy });
    app.route('/api', integrationRoutes(scout.integrations));
    app.route('/', statusRoutes(scout));
    app.route('/', metricsRoutes(createScoutMetrics({ states: scout.states, runner: scout.runner })));
    app.route(API_ROOTS.scoutUploads, uploadPauseRoutes(scout.uploads));
    app.route(
      API_ROOTS.directories,
      directoryRoutes(scout, createJobAdmin({ catalog: scout.catalog, states: scout.states })),
    );
    app.route(API_ROOTS.encryptionKey, encryptionKeyRoutes(scout));
    app.route(API_ROOTS.recovery, recoveryRoutes(scout.restores));
    app.route(API_ROOTS.drills, drillRoutes(scout.drills));
    app.route('/', restoreRequestRoutes(scout.decisions));
    app.route('/', webUiRoutes('scout'));
    await scout.states.markInterrupted();
    const swept = await sweepStaging(scout.backup.stagingDir, scout.states);
    await scout.backup.removal.sweep();
    if (swept.length > 0)
      log.info({ removed: swept.length, examples: swept.slice(0, 5) }, 'staging: leftovers removed');
    const problem = await scout.catalog.problem();
    if (problem) log.warn({ scan_root: config.scanRoot }, problem);
    void scout.catalog.refresh();
    const settings = await scout.settings.read();
    scout.scheduler.apply(settings.cron_schedule);
    scout.drills.apply(settings.drill_schedule);
    return {
      app,
      async close() {
        scout.scheduler.stop();
        scout.drills.stop();
        await scout.runner.stop();
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
