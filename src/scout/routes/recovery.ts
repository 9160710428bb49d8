import { Hono } from 'hono';
import { z } from 'zod';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import type { Restores } from '../restore/restore-service.ts';

const RestoreBody = z.object({
  relative_path: z.string({ error: 'relative_path is required' }),
  fingerprint: z.string().optional(),
});

/** Preview and restore of a job's snapshot (whole snapshots; files absent from it stay). */
export function recoveryRoutes(restores: Restores) {
  const app = new Hono<AppEnv>();
  app.post('/preview', adminOnly('restore'), async (c) => {
    const body = await readJson(c, RestoreBody);
    return c.json(await restores.preview(body.relative_path, body.fingerprint));
  });
  app.post('/restore', adminOnly('restore'), async (c) => {
    const body = await readJson(c, RestoreBody);
    return c.json(await restores.restore(body.relative_path, body.fingerprint));
  });
  return app;
}
