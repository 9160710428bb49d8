import { Hono } from 'hono';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import { JobSnapshotsQuerySchema, RestoreBodySchema } from '../../shared/protocol/scout-recovery.ts';
import type { Restores } from '../restore/restore-service.ts';

/** Preview and restore of a job's snapshot, or chosen paths of it, into the job folder or another folder (files absent from it stay). */
export function recoveryRoutes(restores: Restores) {
  const app = new Hono<AppEnv>();
  app.get('/snapshots', adminOnly('restore'), async (c) => {
    const { relative_path } = readQuery(c, JobSnapshotsQuerySchema);
    return c.json(await restores.snapshots(relative_path));
  });
  app.post('/preview', adminOnly('restore'), async (c) => {
    const { relative_path, ...choice } = await readJson(c, RestoreBodySchema);
    return c.json(await restores.preview(relative_path, choice));
  });
  app.post('/restore', adminOnly('restore'), async (c) => {
    const { relative_path, ...choice } = await readJson(c, RestoreBodySchema);
    return c.json(await restores.restore(relative_path, choice));
  });
  return app;
}
