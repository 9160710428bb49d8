import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.ts';
import { clientAddress } from './client-address.ts';
import { refuseHost } from './host-refusal.ts';
import { machineNames } from './machine-names.ts';

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

/**
 * Which `Host` names a server answers. With `ALLOWED_HOSTS` set (`listed`): those and no
 * others. Unset: IP addresses, `localhost` and `*.localhost`, this machine's own names
 * (machine-names.ts) and `ownNames` (the Scout's `ADVERTISED_URL` host).
 */
export interface HostPolicy {
  listed: AllowedHost[] | undefined;
  ownNames: string[];
}

/** The policy of an `ALLOWED_HOSTS` value and the role's own configured URLs (their host names). */
export function hostPolicy(
  allowedHosts: string | undefined,
  ownUrls: (string | undefined)[] = [],
): HostPolicy {
  const listed = parseAllowedHosts(allowedHosts);
  const ownNames: string[] = [];
  for (const url of ownUrls) {
    if (url === undefined || !URL.canParse(url)) continue;
    const host = parseHost(new URL(url).host)?.host;
    if (host) ownNames.push(host);
  }
  return { listed: listed && listed.length > 0 ? listed : undefined, ownNames };
}

/** Load balancers probe these by IP address or an internal name; they reveal nothing to act on. */
const ALWAYS_ALLOWED = new Set(['/health', '/health/ready']);

/** Routes that take a bearer token (automation tokens, Station tokens, metrics scrapes). */
const TOKEN_ROUTES = /^\/(api|backup)\/|^\/metrics$/;

/** An IP address (`10.0.0.7`, `[::1]`) or a loopback name, which no other site can bind to. */
function isAddressOrLocal(host: string): boolean {
  if (host.startsWith('[')) return isIP(host.slice(1, -1)) === 6;
  return isIP(host) === 4 || host === 'localhost' || host.endsWith('.localhost');
}

/**
 * A browser never adds a bearer token on its own, so a rebinding page can only send one it
 * already holds: Scouts, scripts and Prometheus reach the server by any name with one.
 */
function carriesToken(c: Context<AppEnv>): boolean {
  return TOKEN_ROUTES.test(c.req.path) && /^Bearer\s+\S/i.test(c.req.header('authorization') ?? '');
}

/** Names already warned about (at most this many, so a flood of names cannot grow the set). */
const WARN_ONCE_LIMIT = 1000;

/**
 * Refuses requests for a `Host` this server does not answer (host-refusal.ts: 403
 * `host_not_allowed`, saying how to allow the name), so a web page that rebinds its own DNS
 * name to this server's address cannot drive it: it could sign in to a fresh install with the
 * initial password. `/health` answers for any host. Without `ALLOWED_HOSTS` a request with a
 * bearer token on a token route passes too (see `carriesToken`). The first refusal of each
 * name is logged as a warning, so an operator whose browsers use a name not yet allowed sees why.
 */
export function allowedHosts(
  policy: HostPolicy = { listed: undefined, ownNames: [] },
): MiddlewareHandler<AppEnv> {
  const known = policy.listed
    ? undefined
    : machineNames().then((names) => new Set([...names, ...policy.ownNames]));
  const warned = new Set<string>();
  return async function allowedHosts(c, next) {
    if (ALWAYS_ALLOWED.has(c.req.path)) return next();
    const header = c.req.header('host') ?? '';
    const asked = parseHost(header);
    let allowed: boolean;
    if (policy.listed) {
      allowed =
        asked !== null &&
        policy.listed.some((entry) => entry.host === asked.host && (entry.port ?? asked.port) === asked.port);
    } else {
      allowed =
        (asked !== null && (isAddressOrLocal(asked.host) || (await known)?.has(asked.host) === true)) ||
        carriesToken(c);
    }
    if (allowed) return next();
    const name = asked?.host ?? null;
    if (name !== null && !warned.has(name) && warned.size < WARN_ONCE_LIMIT) {
      warned.add(name);
      c.get('log')?.warn(
        { host: header.slice(0, 200), client: clientAddress(c) },
        `refused a request for the host name ${name}: ${policy.listed ? 'it is not in ALLOWED_HOSTS' : 'not a name of this machine; set ALLOWED_HOSTS to allow it'}`,
      );
    }
    return refuseHost(c, header, name, policy.listed ? 'not_listed' : 'unknown_name');
  };
}
