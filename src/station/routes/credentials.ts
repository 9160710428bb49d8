import { Hono } from 'hono';
import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { DEFAULT_STATION_TOKEN_TTL_DAYS } from '../services/station-tokens.ts';
import type { StationServices } from '../services.ts';
import { checkComponent } from '../storage/snapshot-store.ts';

const MintBody = z.object({
  ttl_days: z.number().int('ttl_days must be a whole number').optional(),
  shared: z.boolean().default(false),
  max_registrations: z.number().int('max_registrations must be a whole number').optional(),
});

function checkTtl(ttl: number): number {
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 3650) throw badRequest('ttl_days must be from 1 to 3650');
  return ttl;
}

/** Station tokens (legacy route names `/api/credentials`). */
export function credentialRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.use('*', adminOnly('manage'));

  app.get('/', async (c) => c.json({ credentials: await station.tokens.list() }));

  app.post('/mint', async (c) => {
    const body = await readJson(c, MintBody);
    const query = c.req.query('ttl_days');
    if (query !== undefined && !/^\d+$/.test(query)) throw badRequest('ttl_days must be from 1 to 3650');
    const ttl = body.ttl_days ? body.ttl_days : query ? Number(query) : DEFAULT_STATION_TOKEN_TTL_DAYS;
    const minted = await station.tokens.mint({
      ttl_days: checkTtl(ttl),
      shared: body.shared,
      max_registrations: body.max_registrations,
    });
    return c.json(minted, 201);
  });

  app.delete('/instances/:scoutId/:instanceId', async (c) => {
    const { scoutId, instanceId } = c.req.param();
    checkComponent('scout_id', scoutId);
    checkComponent('scout_instance_id', instanceId);
    return c.json(await station.tokens.revokeInstance(scoutId, instanceId));
  });

  app.delete('/:tokenHash', async (c) => {
    const hash = c.req.param('tokenHash');
    if (!/^[0-9a-f]{64}$/.test(hash)) throw badRequest('token_hash must be 64 lowercase hex characters');
    return c.json(await station.tokens.revoke(hash));
  });

  return app;
}
