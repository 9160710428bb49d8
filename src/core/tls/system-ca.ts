import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { logger } from '../log.ts';

const log = logger.child({ mod: 'core/tls' });

/**
 * Makes every outgoing TLS connection (fetch included) trust the operating system's CA store
 * in addition to Node's bundled one, so a Station behind a certificate from a local CA that
 * the host already trusts just works.
 */
export function trustSystemCertificates(extra: string[] = []): number {
  try {
    const all = new Set([...getCACertificates('bundled'), ...getCACertificates('system'), ...extra]);
    setDefaultCACertificates([...all]);
    return all.size;
  } catch (error) {
    log.warn({ err: error }, 'could not load the system CA store; using the bundled one');
    return 0;
  }
}
