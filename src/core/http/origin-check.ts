import type { MiddlewareHandler } from 'hono';
import { forbidden } from '../errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses browser writes from another origin: `Sec-Fetch-Site: cross-site`, or an `Origin`
 * whose host differs from the request's own Host. Requests without these headers (scripts,
 * Scouts) pass.
 */
export function sameOriginWrites(): MiddlewareHandler {
  return async function sameOriginWrites(c, next) {
    if (!SAFE_METHODS.has(c.req.method)) {
      if (c.req.header('sec-fetch-site') === 'cross-site') {
        throw forbidden('cross-origin browser writes are refused');
      }
      const origin = c.req.header('origin');
      if (origin !== undefined) {
        let originHost: string | null = null;
        try {
          originHost = new URL(origin).host;
        } catch {
          originHost = null;
        }
        const host = c.req.header('host') ?? new URL(c.req.url).host;
        if (originHost === null || originHost.toLowerCase() !== host.toLowerCase()) {
          throw forbidden(`cross-origin browser writes are refused (Origin ${origin} is not ${host})`);
        }
      }
    }
    await next();
  };
}
