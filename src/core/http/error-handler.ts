import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError } from '../errors.ts';
import { logger } from '../log.ts';
import type { AppEnv } from './app-env.ts';

const log = logger.child({ mod: 'core/http' });

/** The one place errors become responses: JSON `{detail}`, never a stack trace. */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  const requestLog = c.get('log') ?? log;
  if (err instanceof AppError) {
    if (err.status >= 500) requestLog.error({ err }, err.message);
    const body = err.code ? { detail: err.detail, code: err.code } : { detail: err.detail };
    return c.json(body, err.status as ContentfulStatusCode, err.headers);
  }
  if (err instanceof HTTPException) {
    return c.json({ detail: err.message || 'request refused' }, err.status);
  }
  requestLog.error({ err }, 'unhandled error');
  const id = c.get('requestId');
  return c.json({ detail: `internal server error; the server log has the cause (request id ${id})` }, 500);
}

export function handleNotFound(c: Context<AppEnv>): Response {
  const path = new URL(c.req.url).pathname;
  return c.json({ detail: `no route for ${c.req.method} ${path}` }, 404);
}
