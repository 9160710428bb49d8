import { Hono } from 'hono';
import { z } from 'zod';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import type { Restores } from '../restore/restore-service.ts';

const RestoreBody = z.object({
  relative_path: z.string({ error: 'relative_path is required' }),
  fingerprint: z.string().optional(),
  filename: z.string().optional(),
  paths: z
    .array(z.string({ error: 'paths: each must be a string' }), { error: 'paths must be a list of paths' })
    .optional(),
  destination: z.string({ error: 'destination must be a string' }).optional(),
});

const ListQuery = z.object({
  relative_path: z.string({ error: 'relative_path is required (the job folder, relative to SCAN_ROOT)' }),
});

/** Preview and restore of a job's snapshot, or chosen paths of it, into the job folder or another folder (files absent from it stay). */
export function recoveryRoutes(restores: Restores) {
  const app = new Hono<AppEnv>();
  app.get('/snapshots', adminOnly('restore'), async (c) => {
    const { relative_path } = readQuery(c, ListQuery);
    return c.json(await restores.snapshots(relative_path));
  });
  app.post('/preview', adminOnly('restore'), async (c) => {
    const { relative_path, ...choice } = await readJson(c, RestoreBody);
    return c.json(await restores.preview(relative_path, choice));
  });
  app.post('/restore', adminOnly('restore'), async (c) => {
    const { relative_path, ...choice } = await readJson(c, RestoreBody);
    return c.json(await restores.restore(relative_path, choice));
  });
  return app;
}
