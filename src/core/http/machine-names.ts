import { lookup, lookupService } from 'node:dns/promises';
import { hostname } from 'node:os';

/** How long start-up waits for the resolver to name this machine (a slow DNS must not stall requests). */
const LOOKUP_TIMEOUT_MS = 2000;

const clean = (name: string) => name.trim().toLowerCase().replace(/\.$/, '');

/**
 * The fully qualified form of this machine's name, as the resolver gives it (`/etc/hosts` or
 * DNS: the name of the address `hostname` resolves to), when that is `<short>.<domain>`; else
 * undefined. What `hostname -f` prints, without running it.
 */
async function qualifiedName(name: string, short: string): Promise<string | undefined> {
  const timeout = new Promise<undefined>((done) =>
    setTimeout(() => done(undefined), LOOKUP_TIMEOUT_MS).unref(),
  );
  const found = (async () => {
    const { address } = await lookup(name);
    return clean((await lookupService(address, 0)).hostname);
  })().catch(() => undefined);
  const qualified = await Promise.race([found, timeout]);
  return qualified?.startsWith(`${short}.`) ? qualified : undefined;
}

/**
 * The names this machine answers to by itself: its host name (`os.hostname()`), the short and
 * fully qualified forms of it, and `<short>.local` (mDNS), lower-case. A page on another
 * domain can never make a browser send these as its Host.
 */
export async function machineNames(): Promise<Set<string>> {
  const name = clean(hostname());
  if (name === '') return new Set();
  const short = name.split('.')[0] ?? name;
  const names = new Set([name, short, `${short}.local`]);
  const qualified = await qualifiedName(name, short);
  if (qualified) names.add(qualified);
  return names;
}
