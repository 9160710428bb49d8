import pino from 'pino';

/**
 * Fields of an error that may carry the values a query was given (a password hash, a
 * `scout_credential`, a token): drizzle's `params`, postgres.js's `parameters`, and the
 * `detail` a database error adds ("Key (username)=(…) already exists").
 */
const VALUE_FIELDS = new Set(['params', 'parameters', 'detail']);
const MAX_DEPTH = 8;

interface QueryError extends Error {
  query: string;
  params: unknown;
}

/** drizzle's DrizzleQueryError: its message and stack are `Failed query: …\nparams: …`. */
function isQueryError(error: Error): error is QueryError {
  return (
    typeof (error as Partial<QueryError>).query === 'string' &&
    'params' in error &&
    error.message.startsWith('Failed query: ')
  );
}

/** The stack's frames under a new first line, so the old message (and its params) are gone. */
function restack(error: Error, message: string): string | undefined {
  const stack = error.stack;
  if (stack === undefined) return undefined;
  const frames = stack.indexOf('\n    at ');
  return `${error.name}: ${message}${frames === -1 ? '' : stack.slice(frames)}`;
}

/** A copy of the error and its causes without query values; the rest is kept for the log. */
function scrub(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error) || depth > MAX_DEPTH) return value;
  // A plain Error underneath: host errors (DOMException) have getters that throw on a copy.
  const copy = Object.create(Error.prototype) as Record<string, unknown>;
  Object.defineProperty(copy, 'constructor', { value: value.constructor, enumerable: false });
  const appError = typeof (value as { status?: unknown }).status === 'number' && value.name === 'AppError';
  for (const key of Object.keys(value)) {
    if (key === 'cause' || (VALUE_FIELDS.has(key) && !appError)) continue;
    copy[key] = (value as unknown as Record<string, unknown>)[key];
  }
  const message = isQueryError(value) ? `Failed query: ${value.query}` : value.message;
  Object.defineProperty(copy, 'message', { value: message, enumerable: false, writable: true });
  Object.defineProperty(copy, 'stack', {
    value: isQueryError(value) ? restack(value, message) : value.stack,
    enumerable: false,
    writable: true,
  });
  Object.defineProperty(copy, 'name', { value: value.name, enumerable: Object.hasOwn(value, 'name') });
  if (value.cause !== undefined) {
    Object.defineProperty(copy, 'cause', { value: scrub(value.cause, depth + 1), enumerable: false });
  }
  const errors = (value as { errors?: unknown }).errors;
  if (Array.isArray(errors)) copy.errors = errors.map((e) => scrub(e, depth + 1));
  return copy;
}

/**
 * pino's error serializer (type, message and stack with their causes) over a copy of the
 * error that never carries the values a failed query was given.
 */
export function serializeError(value: unknown): unknown {
  return pino.stdSerializers.err(scrub(value) as Error);
}
