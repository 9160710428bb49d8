import { Hono } from 'hono';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import { ByFingerprintQuerySchema, RequestReportSchema } from '../../shared/protocol/recovery.ts';
import type { StationServices } from '../services.ts';
import { sendSnapshot } from './send-snapshot.ts';
import { stationToken } from './station-token-auth.ts';

/**
 * Downloads for Scouts: only from an instance their Station token is bound to. The addresses
 * Scouts call are built in src/shared/protocol/paths.ts (`instancePaths`).
 */
export function recoveryRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  const ref = (p: Record<string, string>) => ({
    scoutId: p.scoutId ?? '',
    instanceId: p.instanceId ?? '',
    jobName: p.jobName ?? '',
  });

  // Restore requests of the receiving instance (registered first: `requests` is not a job here).
  app.get('/:scoutId/:instanceId/requests', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId } = c.req.param();
    return c.json(await station.restoreRequests.list(token, scoutId, instanceId));
  });

  // The instance's jobs (a job named `jobs` has 4-part addresses, so this one is free).
  app.get('/:scoutId/:instanceId/jobs', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId } = c.req.param();
    return c.json(await station.recovery.jobs(token, scoutId, instanceId));
  });

  app.post('/:scoutId/:instanceId/requests/:requestId', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId, requestId } = c.req.param();
    const body = await readJson(c, RequestReportSchema);
    return c.json(await station.restoreRequests.update(token, scoutId, instanceId, requestId, body.status));
  });

  app.get('/:scoutId/:instanceId/requests/:requestId/archive', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { scoutId, instanceId, requestId } = c.req.param();
    const key = await station.restoreRequests.archive(token, scoutId, instanceId, requestId);
    return sendSnapshot(c, station.store, await station.snapshots.locate(key));
  });

  app.get('/:scoutId/:instanceId/:jobName/latest', async (c) => {
    const token = await stationToken(c, station.tokens);
    return sendSnapshot(c, station.store, await station.recovery.latest(token, ref(c.req.param())));
  });

  app.get('/:scoutId/:instanceId/:jobName/snapshots', async (c) => {
    const token = await stationToken(c, station.tokens);
    return c.json(await station.recovery.list(token, ref(c.req.param())));
  });

  app.get('/:scoutId/:instanceId/:jobName/by-fingerprint', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { fp } = readQuery(c, ByFingerprintQuerySchema);
    return sendSnapshot(
      c,
      station.store,
      await station.recovery.byFingerprint(token, ref(c.req.param()), fp),
    );
  });

  app.get('/:scoutId/:instanceId/:jobName/archive/:filename', async (c) => {
    const token = await stationToken(c, station.tokens);
    const located = await station.recovery.exact(token, ref(c.req.param()), c.req.param('filename'));
    return sendSnapshot(c, station.store, located);
  });

  return app;
}
