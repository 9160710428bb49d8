import type { MiddlewareHandler } from 'hono';
import { addressBlock } from '../auth/address-block.ts';
import { hit, type Limit } from '../auth/rate-limit.ts';
import { tooManyRequests } from '../errors.ts';
import type { AppEnv } from './app-env.ts';
import { clientAddress } from './client-address.ts';

export const API_REQUESTS_PER_MINUTE = 1200;
const API_LIMIT: Limit = { name: 'api', limit: API_REQUESTS_PER_MINUTE, windowMs: 60_000 };

/**
 * The general limit on `/api` routes per client address (an IPv6 /64 as one). Snapshot downloads are not counted
 * (a restore may fetch many large files). Counted in the role's window counter (the
 * Station's database, so Stations behind one load balancer count together).
 */
export function apiRateLimit(isExempt: (method: string, path: string) => boolean): MiddlewareHandler<AppEnv> {
  return async function apiRateLimit(c, next) {
    if (!isExempt(c.req.method, c.req.path)) {
      const wait = await hit(c.get('core').windows, API_LIMIT, addressBlock(clientAddress(c)));
      if (wait > 0) throw tooManyRequests(wait, `too many requests; try again in ${wait} seconds`);
    }
    await next();
  };
}
