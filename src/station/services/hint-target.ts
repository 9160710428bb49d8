import { isIP } from 'node:net';

/**
 * Where a restore hint may go (issue #23 item 7: a Station token holder must not make the
 * Station POST to any address it names). The `advertised_url` an upload initiation brings is
 * kept with its host replaced by the address the Scout connected from (the client address of
 * that request, `TRUST_PROXY` rules: src/core/http/client-address.ts), unless its host is listed
 * in `RESTORE_HINT_HOSTS`; a hint is then only ever sent to an IP address or a listed host.
 */

/** A URL's host as written in a list: lowercase, IPv6 without brackets. */
const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');

/** The advertised URL as kept: pinned to `from`, or as given for a listed host; undefined when neither can be. */
export function pinnedHintUrl(
  advertisedUrl: string | undefined,
  from: string,
  allowedHosts: readonly string[],
): string | undefined {
  if (advertisedUrl === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(advertisedUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.username = '';
  url.password = '';
  if (allowedHosts.includes(hostOf(url))) return url.href;
  const version = isIP(from);
  if (version === 0) return undefined;
  url.hostname = version === 6 ? `[${from}]` : from;
  return url.href;
}

/** Whether a kept URL may be sent a hint: its host is an IP address (pinned) or listed. */
export function isHintTarget(url: URL, allowedHosts: readonly string[]): boolean {
  const host = hostOf(url);
  return isIP(host) !== 0 || allowedHosts.includes(host);
}
