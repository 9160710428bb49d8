import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import type { StationServices } from '../services.ts';
import { stationToken } from './station-token-auth.ts';

const DrillBody = z.strictObject({
  filename: z.string({ error: 'filename must be the drilled snapshot file name' }).max(255),
  status: z.enum(['ok', 'failed'], { error: 'status must be ok or failed' }),
  files: z.number().int().min(0, 'files must be a whole number ≥ 0').max(Number.MAX_SAFE_INTEGER),
  bytes: z.number().int().min(0, 'bytes must be a whole number ≥ 0').max(Number.MAX_SAFE_INTEGER),
  error: z.string().max(4000, 'error is at most 4000 characters').nullable(),
  finished_at: z.iso.datetime({ offset: true, error: 'finished_at must be an ISO 8601 date and time' }),
});

/** Scouts report restore drills here (Station token bound to the instance). */
export function drillRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.post('/:scoutId/:instanceId/:jobName', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId, jobName } = c.req.param();
    const body = await readJson(c, DrillBody);
    return c.json(await station.drills.record(token, { scoutId, instanceId, jobName }, body));
  });
  return app;
}
