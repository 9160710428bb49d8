import type { MiddlewareHandler } from 'hono';
import { AppError } from '../errors.ts';

/** One `ALLOWED_HOSTS` entry: a host name or IP address, with a port or (null) any port. */
export interface AllowedHost {
  host: string;
  port: string | null;
}

const ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/;

/** Splits a Host header or list entry into a lower-case name (no trailing dot) and port. */
export function parseHost(text: string): AllowedHost | null {
  const match = ENTRY.exec(text.trim().toLowerCase());
  if (!match?.[1]) return null;
  return { host: match[1].replace(/\.$/, ''), port: match[2] ?? null };
}

/**
 * The `ALLOWED_HOSTS` value: comma-separated host names or addresses, each with an optional
 * `:port`. Unset or empty: undefined (any host). Throws on an entry that is not a host.
 */
export function parseAllowedHosts(text: string | undefined): AllowedHost[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const parsed = parseHost(entry);
      if (!parsed) {
        throw new Error(
          `ALLOWED_HOSTS entry "${entry}" is not a host name or address with an optional :port (no scheme, no path)`,
        );
      }
      return parsed;
    });
}

/** Load balancers probe these by IP address or an internal name; they reveal nothing to act on. */
const ALWAYS_ALLOWED = new Set(['/health', '/health/ready']);

/**
 * Refuses requests whose `Host` header is not in `ALLOWED_HOSTS` with 403 `host_not_allowed`,
 * so a page that rebinds its own DNS name to this server's address cannot drive it (a fresh
 * install still has its initial password). `/health` answers for any host. No list: any host.
 */
export function allowedHosts(list: AllowedHost[] | undefined): MiddlewareHandler {
  return async function allowedHosts(c, next) {
    if (list && list.length > 0 && !ALWAYS_ALLOWED.has(c.req.path)) {
      const header = c.req.header('host') ?? '';
      const asked = parseHost(header);
      const allowed =
        asked !== null &&
        list.some((entry) => entry.host === asked.host && (entry.port ?? asked.port) === asked.port);
      if (!allowed) {
        const shown = header === '' ? 'no Host header' : `Host ${JSON.stringify(header.slice(0, 100))}`;
        throw new AppError(
          403,
          `this server does not answer requests for ${shown}: it is not in ALLOWED_HOSTS; use the server's configured address, or add this name to ALLOWED_HOSTS`,
          { code: 'host_not_allowed' },
        );
      }
    }
    await next();
  };
}
