import { clock } from '../core/clock.ts';
import type { StationConfig } from '../core/config.ts';
import type { Core } from '../core/core.ts';
import { createIntegrations } from '../core/integrations.ts';
import { createUploadAcceptance } from '../core/settings/upload-acceptance.ts';
import type { StationDatabase } from './db/open.ts';
import { createReplicationPulls } from './replication/pulls.ts';
import { createReplication } from './replication/replication.ts';
import { createJobRetention } from './retention/job-overrides.ts';
import { createRetentionPreview } from './retention/preview.ts';
import { createRefusalTally } from './retention/refusal-tally.ts';
import { createUploadRate } from './retention/upload-rate.ts';
import { createDrills } from './services/drills.ts';
import { createJobSummaries } from './services/job-summaries.ts';
import { createLeases } from './services/leases.ts';
import { createRateWindows } from './services/rate-windows.ts';
import { createRecovery } from './services/recovery.ts';
import { createRestoreRequests } from './services/restore-requests.ts';
import { sharedSigningKey } from './services/signing-key.ts';
import { createSnapshotIndex } from './services/snapshot-index.ts';
import { createSnapshots } from './services/snapshots.ts';
import { createStationEvents } from './services/station-events.ts';
import { createStationSettings } from './services/station-settings.ts';
import { createStationTokens } from './services/station-tokens.ts';
import { createVerifier } from './services/verify.ts';
import { createSnapshotStore } from './storage/index.ts';
import { createUploads, processLock } from './uploads/index.ts';

/** Everything the Station's routes call into. */
export function createStationServices(config: StationConfig, core: Core, storage: StationDatabase) {
  const db = storage.stationDb;
  const integrations = createIntegrations('station', config.dataDir, core.settings);
  const events = createStationEvents(integrations);
  const settings = createStationSettings(core.settings);
  const acceptance = createUploadAcceptance(core.settings);
  const tokens = createStationTokens(db, sharedSigningKey(db, config.dataDir));
  const index = createSnapshotIndex(db);
  const leases = createLeases(db);
  const store = createSnapshotStore(config);
  const jobRetention = createJobRetention(db, settings, clock);
  const refusals = createRefusalTally();
  // In the database on PGlite too: Stations sharing PostgreSQL count one job's uploads together.
  const uploadRate = createUploadRate(createRateWindows(db), (refused) => {
    refusals.add(refused);
    if (refused.first) events.uploadsRefused(refused);
  });
  const uploads = createUploads({
    db,
    // PGlite lives in this one process: its uploads need no lease in the database.
    ...(storage.kind === 'pglite' ? { lock: processLock() } : {}),
    maxUploadBytes: config.maxUploadBytes,
    tokens,
    index,
    store,
    settings,
    acceptance,
    events: events.uploads,
    jobRetention,
    uploadRate,
  });
  return {
    config,
    core,
    storage,
    settings,
    acceptance,
    tokens,
    index,
    store,
    leases,
    jobRetention,
    refusals,
    retention: createRetentionPreview({ index, jobRetention, settings, clock }),
    snapshots: createSnapshots({ index, store }),
    jobs: createJobSummaries({ db, index }),
    recovery: createRecovery({ tokens, index, store }),
    drills: createDrills({ db, tokens, index, windows: core.windows, notifier: integrations.notifier }),
    restoreRequests: createRestoreRequests({
      db,
      index,
      tokens,
      hintHosts: config.restoreHintHosts,
      onCreated: events.restoreRequested,
    }),
    integrations,
    verifier: createVerifier({
      index,
      store,
      settings: core.settings,
      leases,
      onDone: events.verificationDone,
    }),
    uploads,
    replicationPulls: createReplicationPulls(db, clock),
    replication: createReplication({
      db,
      settingsStore: core.settings,
      index,
      copies: uploads.copies,
      leases,
      clock,
      events: events.replication,
    }),
  };
}

export type StationServices = ReturnType<typeof createStationServices>;
