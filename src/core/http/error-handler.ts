import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { defaultErrorCode } from '../../shared/protocol/error-codes.ts';
import { AppError } from '../errors.ts';
import { logger } from '../log.ts';
import { serializeError } from '../log-errors.ts';
import type { AppEnv } from './app-env.ts';

const log = logger.child({ mod: 'core/http' });

/** Answers that report a condition (Station unreachable, paused, disk full), not a fault of ours. */
const EXPECTED_5XX = new Set([502, 503, 507]);

/** The message of a cause (and its causes), without query values. */
function causeText(cause: unknown): string {
  const serialized = serializeError(cause) as { message?: unknown };
  return typeof serialized?.message === 'string' ? serialized.message : String(cause);
}

/**
 * Refusals are expected: a 4xx is logged at `info`, a 502/503/507 at `warn`, each as one line
 * without a stack. Any other 5xx is a failure, logged at `error` with its stack and cause.
 */
function logAppError(requestLog: typeof log, err: AppError): void {
  const fields: Record<string, unknown> = { status: err.status };
  fields.code = err.code;
  if (err.cause !== undefined) fields.cause = causeText(err.cause);
  if (err.status < 500) requestLog.info(fields, err.message);
  else if (EXPECTED_5XX.has(err.status)) requestLog.warn(fields, err.message);
  else requestLog.error({ err }, err.message);
}

/** The one place errors become responses: JSON `{detail, code}`, never a stack trace. */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  const requestLog = c.get('log') ?? log;
  if (err instanceof AppError) {
    logAppError(requestLog, err);
    return c.json({ detail: err.detail, code: err.code }, err.status as ContentfulStatusCode, err.headers);
  }
  if (err instanceof HTTPException) {
    return c.json(
      { detail: err.message || 'request refused', code: defaultErrorCode(err.status) },
      err.status,
    );
  }
  requestLog.error({ err }, 'unhandled error');
  const id = c.get('requestId');
  return c.json(
    { detail: `internal server error; the server log has the cause (request id ${id})`, code: 'internal' },
    500,
  );
}

export function handleNotFound(c: Context<AppEnv>): Response {
  const path = new URL(c.req.url).pathname;
  return c.json({ detail: `no route for ${c.req.method} ${path}`, code: 'not_found' }, 404);
}
