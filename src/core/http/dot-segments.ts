import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { badRequest } from '../errors.ts';

const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/**
 * Refuses request paths with `.` or `..` segments (also percent-encoded). URL parsing would
 * resolve them before routing, so a path component could silently change meaning.
 */
export function noDotSegments(): MiddlewareHandler {
  return async function noDotSegments(c, next) {
    const raw = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.url ?? '';
    const path = raw.split('?')[0] ?? '';
    if (DOT_SEGMENT.test(path)) throw badRequest('path segments "." and ".." are not allowed');
    await next();
  };
}
