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
    const mayReadSettings = maySeeSettings(c, { adminOnly: true });
    return c.json({
      scout_id: settings.scout_id,
      scout_instance_id: scout.instanceId,
      ...(mayReadSettings ? { settings } : {}),
      uploads_paused: await scout.uploads.paused(),
    });
  });

  app.get('/api/settings', adminOnly('manage'), async (c) =>
    c.json({ settings: await scout.settings.read() }),
  );

  app.post('/api/settings', adminOnly('manage'), async (c) => {
    const input = await readJson(c, ScoutSettingsInput);
    return c.json({ settings: await scout.settings.replace(input) });
  });

  return app;
}
