import { Hono } from 'hono';
import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import { decimalQueryField, isSha256Hex, SHA256_RULE } from '../../shared/protocol/fields.ts';
import { MintRequestSchema, type StationTokenList } from '../../shared/protocol/station-tokens.ts';
import { DEFAULT_STATION_TOKEN_TTL_DAYS } from '../services/station-tokens.ts';
import type { StationServices } from '../services.ts';
import { checkComponent } from '../storage/keys.ts';

const TTL_RULE = 'from 1 to 3650';
/** `?ttl_days=` (older clients send it in the query instead of the body). */
const MintQuery = z.object({ ttl_days: decimalQueryField('ttl_days', TTL_RULE).optional() });

/** The instance a recovery token is bound to, or none; one of the two fields alone is a 400. */
function recoveryTarget(body: { scout_id?: string | undefined; scout_instance_id?: string | undefined }) {
  if (body.scout_id === undefined && body.scout_instance_id === undefined) return undefined;
  if (body.scout_id === undefined || body.scout_instance_id === undefined)
    throw badRequest(
      'a recovery token needs both scout_id and scout_instance_id (or neither for a normal token)',
    );
  checkComponent('scout_id', body.scout_id);
  checkComponent('scout_instance_id', body.scout_instance_id);
  return { scoutId: body.scout_id, instanceId: body.scout_instance_id };
}

function checkTtl(ttl: number): number {
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 3650) throw badRequest('ttl_days must be from 1 to 3650');
  return ttl;
}

/** Station tokens (legacy route names `/api/credentials`). */
export function stationTokenRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.use('*', adminOnly('manage'));

  app.get('/', async (c) => c.json({ credentials: await station.tokens.list() } satisfies StationTokenList));

  app.post('/mint', async (c) => {
    const body = await readJson(c, MintRequestSchema);
    const query = readQuery(c, MintQuery);
    const ttl = body.ttl_days ? body.ttl_days : (query.ttl_days ?? DEFAULT_STATION_TOKEN_TTL_DAYS);
    const minted = await station.tokens.mint({
      ttl_days: checkTtl(ttl),
      shared: body.shared,
      max_registrations: body.max_registrations,
      bind_to: recoveryTarget(body),
      revoke_other_tokens: body.revoke_other_tokens,
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
    if (!isSha256Hex(hash)) throw badRequest(`token_hash must be ${SHA256_RULE}`);
    return c.json(await station.tokens.revoke(hash));
  });

  return app;
}
