import { Hono } from 'hono';
import { adminOnly, maySeeSettings, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { ScoutSettingsInput } from '../services/scout-settings.ts';
import type { ScoutServices } from '../services.ts';

export function statusRoutes(scout: ScoutServices) {
  const app = new Hono<AppEnv>();

  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/api/status', signedIn('read'), async (c) => {
    const settings = await scout.settings.read();
    return c.json({
      scout_id: settings.scout_id,
      scout_instance_id: scout.instanceId,
      ...(maySeeSettings(c, { adminOnly: true }) ? { settings } : {}),
      key_fingerprint: scout.keys.current().fingerprint,
      uploads_paused: await scout.uploads.paused(),
      upload_circuit: scout.circuit.view(),
      run_now_requested: scout.scheduler.runNowRequested(),
      scheduler: scout.scheduler.view(),
      operation: scout.runner.current(),
    });
  });

  app.get('/api/settings', adminOnly('manage'), async (c) =>
    c.json({ settings: await scout.settings.read() }),
  );

  app.post('/api/settings', adminOnly('manage'), async (c) => {
    const input = await readJson(c, ScoutSettingsInput);
    const settings = await scout.settings.replace(input);
    scout.scheduler.apply(settings.cron_schedule);
    scout.drills.apply(settings.drill_schedule);
    return c.json({ settings });
  });

  app.post('/api/run-now', signedIn('backup'), (c) => c.json({ status: scout.scheduler.runNow() }));

  app.post('/api/cancel-operation', adminOnly('backup'), (c) => c.json({ status: scout.runner.cancel() }));

  return app;
}
