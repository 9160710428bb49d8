import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../errors.ts';

const NUL_CODE = 'nul_character';

// No id, name or value of the API may hold a NUL character: PostgreSQL text cannot store one
// and file system calls refuse it, so it would surface as a 500 far from where it came in.

/**
 * Refuses `%00` anywhere in the request path or query (a raw NUL cannot reach us: the HTTP
 * parser refuses it), before any route reads a parameter.
 */
export function noNulInAddress(): MiddlewareHandler {
  return async function noNulInAddress(c, next) {
    const raw = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.url ?? c.req.url;
    if (raw.includes('%00')) {
      throw new AppError(
        400,
        'the request address holds %00 (a NUL character), which no path segment or query value may contain; remove it',
        { code: NUL_CODE },
      );
    }
    await next();
  };
}

/** `path.key`, kept short: a detail names the field, it does not echo the body back. */
function childPath(path: string, key: string): string {
  if (path.length > 100) return path.endsWith('…') ? path : `${path}.…`;
  const name = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  return path ? `${path}.${name}` : name;
}

/**
 * The dotted path (`config.exclude.0`) of the first string in a parsed JSON value that holds
 * a NUL character, as a value or as an object key; null when there is none. Iterative: a
 * parsed body may nest 100,000 levels deep.
 */
export function nulField(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (item.includes('\0')) return path || 'the body';
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item).reverse()) {
        if (key.includes('\0')) return path ? `a field name in ${path}` : 'a field name';
        stack.push([child, childPath(path, key)]);
      }
    }
  }
  return null;
}

/** Throws a 400 naming the field when a parsed JSON body holds a NUL character anywhere. */
export function refuseNulIn(body: unknown): void {
  const field = nulField(body);
  if (field !== null) {
    throw new AppError(400, `${field} must not contain a NUL character (\\u0000); remove it`, {
      code: NUL_CODE,
    });
  }
}
