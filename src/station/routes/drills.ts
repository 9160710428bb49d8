import { Hono } from 'hono';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { DrillOutcomeSchema } from '../../shared/protocol/drills.ts';
import type { StationServices } from '../services.ts';
import { stationToken } from './station-token-auth.ts';

/** Scouts report restore drills here (Station token bound to the instance). */
export function drillRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.post('/:scoutId/:instanceId/:jobName', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId, jobName } = c.req.param();
    const body = await readJson(c, DrillOutcomeSchema);
    return c.json(await station.drills.record(token, { scoutId, instanceId, jobName }, body));
  });
  return app;
}
