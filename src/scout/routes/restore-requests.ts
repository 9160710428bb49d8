import { Hono } from 'hono';
import { SlidingWindowLimiter } from '../../core/auth/rate-limit.ts';
import { tooManyRequests } from '../../core/errors.ts';
import { adminOnly, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { clientAddress } from '../../core/http/client-address.ts';
import { readJson } from '../../core/http/json-body.ts';
import { RestoreDecisionSchema, RestoreHintSchema } from '../../shared/protocol/restore-requests.ts';
import type { RequestDecisions } from '../restore/request-decisions.ts';

export const HINTS_PER_MINUTE = 30;

export function restoreRequestRoutes(decisions: RequestDecisions) {
  const app = new Hono<AppEnv>();
  const hints = new SlidingWindowLimiter(HINTS_PER_MINUTE, 60_000);

  app.get('/api/restore-requests', signedIn('read'), async (c) => c.json(await decisions.list()));

  app.post('/api/restore-requests/decision', adminOnly('restore'), async (c) => {
    const body = await readJson(c, RestoreDecisionSchema);
    return c.json(await decisions.decide(body));
  });

  // Public: the Station's hint only makes the Scout re-read its list; it never restores.
  app.post('/backup/restore-notifications', async (c) => {
    const client = clientAddress(c);
    const wait = hints.retryAfterSeconds(client);
    if (wait > 0) throw tooManyRequests(wait, `too many restore hints; try again in ${wait} seconds`);
    hints.record(client);
    const body = await readJson(c, RestoreHintSchema);
    return c.json(await decisions.hint(body.id));
  });

  return app;
}
