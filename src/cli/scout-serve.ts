import { loadScoutConfig, type ServeFlags } from '../core/config.ts';
import { serveRole } from '../core/server.ts';
import { startScout } from '../scout/app.ts';
import { checkScanRoot } from '../scout/jobs/scan-root.ts';
import { applyScoutV8Settings } from '../scout/v8-settings.ts';

export async function scoutServe(flags: ServeFlags): Promise<void> {
  applyScoutV8Settings();
  const config = loadScoutConfig(flags);
  await serveRole({
    ...config,
    role: 'scout',
    notPrivate: [config.scanRoot],
    start: () => startScout(config),
    note: async () => {
      const problem = await checkScanRoot(config.scanRoot);
      return problem ? `But ${problem}.` : `It looks for backup jobs under ${config.scanRoot}.`;
    },
  });
}
