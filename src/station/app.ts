import type { StationConfig } from '../core/config.ts';
import { createCore } from '../core/core.ts';
import { createCoreApp } from '../core/http/core-app.ts';
import { integrationRoutes } from '../core/http/routes/integrations.ts';
import { metricsRoutes } from '../core/http/routes/metrics.ts';
import { uploadPauseRoutes } from '../core/http/routes/upload-pause.ts';
import { webUiRoutes } from '../core/http/web/web-ui.ts';
import { logger } from '../core/log.ts';
import type { RunningRole } from '../core/server.ts';
import { API_ROOTS } from '../shared/protocol/api-paths.ts';
import { BACKUP_ROOTS } from '../shared/protocol/paths.ts';
import { openStationDatabase } from './db/open.ts';
import { replicationMetrics } from './replication/replication-metrics.ts';
import { drillRoutes } from './routes/drills.ts';
import { healthRoutes } from './routes/health.ts';
import { jobRoutes } from './routes/jobs.ts';
import { overviewRoutes } from './routes/overview.ts';
import { recoveryRoutes } from './routes/recovery.ts';
import { replicaTokensConfined } from './routes/replica-token-guard.ts';
import { replicationRoutes } from './routes/replication.ts';
import { replicationSourceRoutes } from './routes/replication-source.ts';
import { retentionRoutes } from './routes/retention.ts';
import { settingsRoutes } from './routes/settings.ts';
import { snapshotRoutes } from './routes/snapshots.ts';
import { stationTokenRoutes } from './routes/station-tokens.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { verifyRoutes } from './routes/verify.ts';
import { stationWindows } from './services/rate-windows.ts';
import { reconcile } from './services/reconcile.ts';
import { createStationMetrics } from './services/station-metrics.ts';
import { createStationServices } from './services.ts';

const log = logger.child({ mod: 'station' });
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** Downloads (an operator's, a replica's) are not counted by the general API rate limit. */
const isDownload = (method: string, path: string) =>
  method === 'GET' &&
  (path.startsWith(`${API_ROOTS.snapshots}/`) ||
    path.startsWith(`${API_ROOTS.replication}/source/snapshots/`));

export async function startStation(config: StationConfig): Promise<RunningRole> {
  const storage = await openStationDatabase(config);
  try {
    const core = createCore('station', storage, stationWindows(storage));
    await core.accounts.ensureInitialAdmin(config.initialAdminPassword);
    const station = createStationServices(config, core, storage);
    await station.store.prepare();
    if (storage.kind === 'pglite') await station.leases.releaseLeftovers();
    await station.tokens.ready();
    await reconcile({
      index: station.index,
      store: station.store,
      uploads: station.uploads,
    });
    await station.integrations.certificates.apply();
    const app = createCoreApp(core, {
      rateLimitExempt: isDownload,
      allowedHosts: config.allowedHosts,
      trustProxy: config.trustProxy,
      afterAuthentication: [replicaTokensConfined()],
    });
    app.route('/api', integrationRoutes(station.integrations));
    app.route('/', healthRoutes(station));
    const metrics = createStationMetrics({
      db: storage.stationDb,
      ...(station.store.space
        ? { storedFree: async () => (await station.store.space?.())?.storedFree ?? null }
        : {}),
      lastVerification: () => station.verifier.last(),
      refusedUploads: () => station.refusals.entries(),
    });
    const replicated = replicationMetrics(metrics.registry, {
      replication: station.replication,
      pulls: station.replicationPulls,
    });
    app.route(
      '/',
      metricsRoutes({
        registry: metrics.registry,
        async refresh() {
          await metrics.refresh();
          await replicated.refresh();
        },
      }),
    );
    app.use(`${BACKUP_ROOTS.uploads}/:uploadId/finalize`, metrics.countFinalize);
    app.route('/api', overviewRoutes(station));
    app.route('/api', settingsRoutes(station));
    app.route('/api', jobRoutes(station));
    app.route('/api', snapshotRoutes(station));
    app.route('/api', verifyRoutes(station));
    app.route('/api', retentionRoutes(station));
    app.route(API_ROOTS.stationUploads, uploadPauseRoutes(station.acceptance));
    app.route(API_ROOTS.stationTokens, stationTokenRoutes(station));
    app.route(API_ROOTS.replication, replicationSourceRoutes(station, station.replicationPulls));
    app.route(API_ROOTS.replication, replicationRoutes(station));
    app.route(BACKUP_ROOTS.uploads, uploadRoutes(station));
    app.route(BACKUP_ROOTS.recovery, recoveryRoutes(station));
    app.route(BACKUP_ROOTS.drills, drillRoutes(station));
    app.route('/', webUiRoutes('station'));
    const sweeper = setInterval(() => {
      // One Station at a time sweeps (a lease in the database).
      station.leases
        .exclusive('upload-sweep', () => station.uploads.sweep())
        .catch((err: unknown) => log.error({ err }, 'upload sweep failed'));
    }, SWEEP_EVERY_MS);
    sweeper.unref();
    await station.replication.start();
    return {
      app,
      async close() {
        clearInterval(sweeper);
        await station.replication.stop();
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
