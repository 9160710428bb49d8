import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { logger } from '../log.ts';
import type { AppEnv } from './app-env.ts';

const log = logger.child({ mod: 'http' });

/** Gives every request an id (echoed as X-Request-Id) and a child logger, and logs its outcome. */
export function requestLog(): MiddlewareHandler<AppEnv> {
  return async function requestLog(c, next) {
    const requestId = randomUUID();
    const started = performance.now();
    const path = new URL(c.req.url).pathname;
    const child = log.child({ req_id: requestId });
    c.set('requestId', requestId);
    c.set('log', child);
    await next();
    c.header('X-Request-Id', requestId);
    const ms = Math.round(performance.now() - started);
    child.info({ method: c.req.method, path, status: c.res.status, ms }, 'request');
  };
}
