import { loadScoutConfig, type ServeFlags } from '../core/config.ts';
import { serveRole } from '../core/server.ts';
import { startScout } from '../scout/app.ts';
import { checkScanRoot } from '../scout/jobs/scan-root.ts';
import { keepYoungGenerationSmall } from '../scout/young-generation.ts';

export async function scoutServe(flags: ServeFlags): Promise<void> {
  keepYoungGenerationSmall();
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
