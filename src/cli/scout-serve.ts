import { loadScoutConfig, type ServeFlags } from '../core/config.ts';
import { serveRole } from '../core/server.ts';
import { startScout } from '../scout/app.ts';

export async function scoutServe(flags: ServeFlags): Promise<void> {
  const config = loadScoutConfig(flags);
  await serveRole({ ...config, role: 'scout', start: () => startScout(config) });
}
