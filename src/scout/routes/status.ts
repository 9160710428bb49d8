import { Hono } from 'hono';
import { clock } from '../../core/clock.ts';
import { adminOnly, maySeeSettings, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import type { OperationReply, ScoutStatus, StationContactView } from '../../shared/protocol/scout-status.ts';
import type { ScoutSettingsView, SettingsReply } from '../../shared/protocol/settings.ts';
import { ScoutSettingsInput } from '../services/scout-settings.ts';
import { stationContact } from '../services/station-contact.ts';
import type { ScoutServices } from '../services.ts';

/** The least time between two Station checks a console asks for. */
export const CHECK_EVERY_MS = 5_000;

type Settings = Awaited<ReturnType<ScoutServices['settings']['read']>>;
const isConfigured = (s: Settings) => Boolean(s.station_url && s.scout_credential);

/** `station` of GET /api/status: what the Scout itself last saw of its Station. */
const stationStatus = (settings: Settings): StationContactView => ({
  configured: isConfigured(settings),
  ...stationContact.view(),
});

export function statusRoutes(scout: ScoutServices) {
  const app = new Hono<AppEnv>();

  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/api/status', signedIn('read'), async (c) => {
    const settings = await scout.settings.read();
    return c.json({
      scout_id: settings.scout_id,
      scout_instance_id: scout.instanceId,
      scan_root: scout.catalog.scanRoot,
      scan_root_problem: await scout.catalog.problem(),
      ...(maySeeSettings(c, { adminOnly: true }) ? { settings } : {}),
      key_fingerprint: scout.keys.current().fingerprint,
      key_saved_at: await scout.keySaved.savedAt(),
      uploads_paused: await scout.uploads.paused(),
      upload_circuit: scout.circuit.view(),
      station: stationStatus(settings),
      run_now_requested: scout.scheduler.runNowRequested(),
      scheduler: scout.scheduler.view(),
      operation: scout.runner.current(),
    } satisfies ScoutStatus);
  });

  app.get('/api/settings', adminOnly('manage'), async (c) =>
    c.json({ settings: await scout.settings.read() } satisfies SettingsReply<ScoutSettingsView>),
  );

  app.post('/api/settings', adminOnly('manage'), async (c) => {
    const input = await readJson(c, ScoutSettingsInput);
    const before = await scout.settings.read();
    const settings = await scout.settings.replace(input);
    scout.scheduler.apply(settings.cron_schedule);
    scout.drills.apply(settings.drill_schedule);
    if (
      before.station_url !== settings.station_url ||
      before.scout_credential !== settings.scout_credential
    ) {
      // Another Station or token: what was seen of the old one no longer says anything, and a
      // check of the old one still waiting (an address that never answers) is not waited for.
      stationContact.reset(settings.station_url);
      void checkStation(true);
    }
    return c.json({ settings } satisfies SettingsReply<ScoutSettingsView>);
  });

  /**
   * Asks the Station now (the restore-request list: one authenticated round trip); the contact
   * is recorded on the way. One check at a time, and a console gets at most one per CHECK_EVERY_MS.
   */
  let checking: Promise<void> | null = null;
  let lastCheck = Number.NEGATIVE_INFINITY;
  function checkStation(fresh = false): Promise<void> {
    if (checking && !fresh) return checking;
    const current: Promise<void> = (async () => {
      lastCheck = clock.now();
      await scout.decisions.list().catch(() => undefined);
    })().finally(() => {
      if (checking === current) checking = null;
    });
    checking = current;
    return current;
  }
  app.post('/api/station/check', signedIn('read'), async (c) => {
    const settings = await scout.settings.read();
    const due = checking !== null || clock.now() - lastCheck >= CHECK_EVERY_MS;
    if (isConfigured(settings) && due) await checkStation();
    return c.json(stationStatus(settings));
  });

  app.post('/api/run-now', signedIn('backup'), (c) =>
    c.json({ status: scout.scheduler.runNow() } satisfies OperationReply),
  );

  app.post('/api/cancel-operation', adminOnly('backup'), (c) =>
    c.json({ status: scout.runner.cancel() } satisfies OperationReply),
  );

  return app;
}
