import { Hono, type MiddlewareHandler } from 'hono';
import { API_ROOTS } from '../../shared/protocol/api-paths.ts';
import type { Core } from '../core.ts';
import { authenticate } from './access.ts';
import type { AppEnv } from './app-env.ts';
import { trustedProxies } from './client-address.ts';
import { noDotSegments } from './dot-segments.ts';
import { handleError, handleNotFound } from './error-handler.ts';
import { allowedHosts, type HostPolicy } from './host-check.ts';
import { noNulInAddress } from './nul-characters.ts';
import { sameOriginWrites } from './origin-check.ts';
import { apiRateLimit } from './rate-limits.ts';
import { requestLog } from './request-log.ts';
import { automationTokenRoutes } from './routes/automation-tokens.ts';
import { sessionRoutes } from './routes/session.ts';
import { userRoutes } from './routes/users.ts';
import { closeAfterUnreadBody } from './unread-body.ts';

export interface CoreAppOptions {
  /** Requests the general `/api` rate limit does not count (downloads). */
  rateLimitExempt?: (method: string, path: string) => boolean;
  /** `ALLOWED_HOSTS` (or, unset, the default names): requests for another Host are 403. */
  allowedHosts?: HostPolicy;
  /** `TRUST_PROXY`: proxy addresses/ranges whose `X-Forwarded-For` the rate limits believe. */
  trustProxy?: readonly string[];
  /** Guards run on every `/api` request right after authentication (before any route). */
  afterAuthentication?: MiddlewareHandler<AppEnv>[];
}

/**
 * The Hono app every role starts from: request ids and logging, the error shape, the
 * `/api` guards (rate limit, same-origin writes, authentication) and the shared routes.
 */
export function createCoreApp(core: Core, options: CoreAppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const proxies = trustedProxies(options.trustProxy ?? []);
  app.onError(handleError);
  app.notFound(handleNotFound);
  app.use('*', closeAfterUnreadBody());
  app.use('*', requestLog());
  app.use('*', async function provideCore(c, next) {
    c.set('core', core);
    c.set('auth', null);
    c.set('trustedProxies', proxies);
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
  });
  app.use('*', allowedHosts(options.allowedHosts));
  app.use('*', noDotSegments());
  app.use('*', noNulInAddress());
  app.use('/api/*', apiRateLimit(options.rateLimitExempt ?? (() => false)));
  app.use('/api/*', sameOriginWrites());
  app.use('/api/*', authenticate());
  for (const guard of options.afterAuthentication ?? []) app.use('/api/*', guard);
  app.route(API_ROOTS.session, sessionRoutes());
  app.route(API_ROOTS.users, userRoutes());
  app.route(API_ROOTS.automationTokens, automationTokenRoutes());
  return app;
}
