import type { MiddlewareHandler } from 'hono';
import { FixedWindowLimiter } from '../auth/rate-limit.ts';
import { tooManyRequests } from '../errors.ts';
import type { AppEnv } from './app-env.ts';
import { clientAddress } from './client-address.ts';

export const API_REQUESTS_PER_MINUTE = 1200;

/**
 * The general limit on `/api` routes per client address. Snapshot downloads are not counted
 * (a restore may fetch many large files).
 */
export function apiRateLimit(isExempt: (method: string, path: string) => boolean): MiddlewareHandler<AppEnv> {
  const limiter = new FixedWindowLimiter(API_REQUESTS_PER_MINUTE, 60_000);
  return async function apiRateLimit(c, next) {
    if (!isExempt(c.req.method, c.req.path)) {
      const wait = limiter.hit(clientAddress(c));
      if (wait > 0) throw tooManyRequests(wait, `too many requests; try again in ${wait} seconds`);
    }
    await next();
  };
}
