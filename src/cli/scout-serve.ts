import { loadScoutConfig, type ServeFlags } from '../core/config.ts';
// The same glibc malloc tunables as the Station's (a Scout signs in with scrypt too and moves
// archives through 1 MiB buffers): idle RSS after five 1 GiB backups 448 → 198 MiB.
import { restartWithMallocTunables } from '../core/malloc-tuning.ts';
import { serveRole } from '../core/server.ts';
import { startScout } from '../scout/app.ts';
import { checkScanRoot } from '../scout/jobs/scan-root.ts';

export async function scoutServe(flags: ServeFlags): Promise<void> {
  restartWithMallocTunables();
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
