import { Hono } from 'hono';
import { signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { DrillRunSchema } from '../../shared/protocol/drills.ts';
import type { OperationReply } from '../../shared/protocol/scout-status.ts';
import type { Drills } from '../drill/drills.ts';

/** Restore drills on demand: one job (`relative_path`) or every job. */
export function drillRoutes(drills: Drills) {
  const app = new Hono<AppEnv>();
  app.post('/run', signedIn('restore'), async (c) => {
    const body = await readJson(c, DrillRunSchema);
    return c.json({ status: await drills.start(body.relative_path) } satisfies OperationReply);
  });
  return app;
}
