// A private certificate authority for TLS tests, made with the `openssl` program: CA
// certificates (30 days, CA:TRUE) and leaf certificates for 127.0.0.1 that a CA signed.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  cert: string;
  key: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function readPair(dir: string, name: string): KeyPair {
  return {
    cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

/** A self-signed CA `/CN=<commonName>` as `<dir>/<name>.pem` with its key `<dir>/<name>.key`. */
export function makeCa(dir: string, name: string, commonName: string): KeyPair {
  // biome-ignore format: openssl options, one pair a line
  openssl(dir, [
    'req', '-x509',
    '-newkey', 'rsa:2048', '-nodes',
    '-keyout', `${name}.key`,
    '-out', `${name}.pem`,
    '-days', '30',
    '-subj', `/CN=${commonName}`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return readPair(dir, name);
}

/**
 * A server certificate `/CN=<commonName>` for IP 127.0.0.1 (not a CA), signed by the CA made
 * as `caName` in the same `dir`; written as `<dir>/<name>.pem` and `<dir>/<name>.key`.
 */
export function makeLeaf(dir: string, caName: string, name: string, commonName: string): KeyPair {
  // biome-ignore format: openssl options, one pair a line
  openssl(dir, [
    'req',
    '-newkey', 'rsa:2048', '-nodes',
    '-keyout', `${name}.key`,
    '-out', `${name}.csr`,
    '-subj', `/CN=${commonName}`,
  ]);
  writeFileSync(
    join(dir, `${name}.ext`),
    'basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  // biome-ignore format: openssl options, one pair a line
  openssl(dir, [
    'x509', '-req',
    '-in', `${name}.csr`,
    '-CA', `${caName}.pem`,
    '-CAkey', `${caName}.key`,
    '-CAcreateserial',
    '-out', `${name}.pem`,
    '-days', '30',
    '-extfile', `${name}.ext`,
  ]);
  return readPair(dir, name);
}

export interface Pki {
  /** The CA certificate (`/CN=Test CA`), PEM. */
  ca: string;
  /** The leaf certificate the CA signed, PEM. */
  leaf: string;
  /** The leaf's private key, PEM. */
  leafKey: string;
}

/** A private CA `/CN=Test CA` (`ca.pem`) and a leaf it signed (`leaf.pem`), made in `dir`. */
export function makePki(dir: string, leafCommonName = '127.0.0.1'): Pki {
  const ca = makeCa(dir, 'ca', 'Test CA');
  const leaf = makeLeaf(dir, 'ca', 'leaf', leafCommonName);
  return { ca: ca.cert, leaf: leaf.cert, leafKey: leaf.key };
}
