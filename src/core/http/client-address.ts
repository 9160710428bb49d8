import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { AppEnv } from './app-env.ts';

/** An IPv4 address written as IPv6 (`::ffff:10.0.0.1`, from a dual-stack socket) in its plain form. */
function plain(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  return v4 ?? address;
}

function family(address: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/**
 * `TRUST_PROXY` as a lookup: addresses and CIDR ranges (`10.0.0.1`, `10.0.0.0/8`, `fd00::/8`)
 * already checked by the config. Undefined when the list is empty (trust no proxy).
 */
export function trustedProxies(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = family(address);
    if (!type) continue;
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

function isTrusted(trusted: BlockList, address: string): boolean {
  const type = family(address);
  return type !== undefined && trusted.check(address, type);
}

/**
 * The address rate limits are kept per: the connection's peer, or, when the peer is a proxy
 * listed in `TRUST_PROXY`, the `X-Forwarded-For` entry that proxy added. The header is read
 * from the right, skipping listed proxies; whatever a client wrote further left is never used
 * once an untrusted address is found, so a client cannot pick its own address.
 */
export function clientAddress(c: Context<AppEnv>): string {
  let peer: string;
  try {
    peer = plain(getConnInfo(c).remote.address ?? 'unknown');
  } catch {
    return 'unknown';
  }
  const trusted = c.get('trustedProxies');
  if (!trusted || !isTrusted(trusted, peer)) return peer;
  const hops = (c.req.header('x-forwarded-for') ?? '').split(',').map((hop) => plain(hop.trim()));
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i] ?? '';
    if (!family(hop)) break;
    client = hop;
    if (!isTrusted(trusted, hop)) break;
  }
  return client;
}
