import { Hono } from 'hono';
import { adminOnly, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { ScoutSettingsInput } from '../services/scout-settings.ts';
import type { ScoutServices } from '../services.ts';

export function statusRoutes(scout: ScoutServices) {
  const app = new Hono<AppEnv>();

  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/api/status', signedIn('read'), async (c) => {
    const settings = await scout.settings.read();
    const auth = c.get('auth');
    const mayReadSettings = auth?.via === 'session' || auth?.scopes.includes('manage') === true;
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

  app.post('/api/uploads/pause', adminOnly('backup'), async (c) => {
    await scout.uploads.setPaused(true);
    return c.json({ status: 'paused', uploads_paused: true });
  });

  app.post('/api/uploads/resume', adminOnly('backup'), async (c) => {
    await scout.uploads.setPaused(false);
    return c.json({ status: 'resumed', uploads_paused: false });
  });

  return app;
}
