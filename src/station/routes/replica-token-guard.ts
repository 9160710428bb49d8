import type { MiddlewareHandler } from 'hono';
import { forbidden } from '../../core/errors.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { stationPaths } from '../../shared/protocol/api-paths.ts';

/** The only routes a token with the `replicate` scope alone may call (replication-source.ts). */
export const REPLICATION_SOURCE_PREFIX = stationPaths.replicationSource;

/**
 * A token whose only scope is `replicate` reaches the replication source routes and nothing
 * else, not even the public session routes: 403 before any route runs.
 */
export function replicaTokensConfined(): MiddlewareHandler<AppEnv> {
  return async function replicaTokensConfined(c, next) {
    const auth = c.get('auth');
    const path = c.req.path;
    if (
      auth?.via === 'token' &&
      auth.scopes.every((scope) => scope === 'replicate') &&
      path !== REPLICATION_SOURCE_PREFIX &&
      !path.startsWith(`${REPLICATION_SOURCE_PREFIX}/`)
    ) {
      throw forbidden(
        `this automation token has only the "replicate" scope: it may list and download snapshots under ${REPLICATION_SOURCE_PREFIX} and nothing else`,
      );
    }
    await next();
  };
}
