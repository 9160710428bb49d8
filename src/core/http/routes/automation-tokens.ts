import { Hono } from 'hono';
import { z } from 'zod';
import type { AutomationTokenList, Removed } from '../../../shared/protocol/accounts.ts';
import { DEFAULT_TOKEN_TTL_DAYS } from '../../auth/automation-tokens.ts';
import { ROLE_SCOPES, SCOPES } from '../../auth/types.ts';
import { badRequest } from '../../errors.ts';
import { adminOnly, currentUser } from '../access.ts';
import type { AppEnv } from '../app-env.ts';
import { readJson } from '../json-body.ts';

const CreateToken = z.object({
  name: z.string().trim().min(1, 'name is required').max(100),
  scopes: z.array(z.enum(SCOPES)).min(1, 'choose at least one scope'),
  ttl_days: z.number().int().min(1).max(3650).default(DEFAULT_TOKEN_TTL_DAYS),
});

/** Creating, listing and revoking automation tokens: an admin's session cookie only. */
export function automationTokenRoutes() {
  const app = new Hono<AppEnv>();
  app.use('*', adminOnly(null));

  app.post('/', async (c) => {
    const body = await readJson(c, CreateToken);
    const core = c.get('core');
    const refused = body.scopes.find((scope) => !ROLE_SCOPES[core.role].includes(scope));
    if (refused) throw badRequest(`scope "${refused}" does not exist on the ${core.role}`);
    const owner = currentUser(c);
    return c.json(await core.tokens.create(owner, body), 201);
  });

  app.get('/', async (c) => {
    const owner = currentUser(c);
    return c.json({ tokens: await c.get('core').tokens.list(owner) } satisfies AutomationTokenList);
  });

  app.delete('/:tokenId', async (c) => {
    const owner = currentUser(c);
    await c.get('core').tokens.revoke(owner, c.req.param('tokenId'));
    return c.json({ status: 'revoked', id: c.req.param('tokenId') } satisfies Removed);
  });

  return app;
}
