import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Station's Ed25519 key that signs Station tokens. Created on first start and kept in
 * `<data-dir>/station-signing-key.pem`, readable by the Station's user only.
 */
export function loadSigningKey(dataDir: string): { privateKey: KeyObject; publicKey: KeyObject } {
  const path = join(dataDir, 'station-signing-key.pem');
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const { privateKey } = generateKeyPairSync('ed25519');
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeFileSync(`${path}.tmp`, pem, { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }
  chmodSync(path, 0o600);
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}
