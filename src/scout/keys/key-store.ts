import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../../core/log.ts';
import { generateScoutKey, parseScoutKey, type ScoutKey } from '../archive/x25519.ts';

const log = logger.child({ mod: 'scout/keys' });

function writePrivate(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * The Scout key (`<data-dir>/scout-key`, mode 0600) and the keyring of retired keys
 * (`<data-dir>/keyring/<fingerprint>`), so snapshots made before a rotation stay restorable.
 */
export function createKeyStore(dataDir: string) {
  const currentPath = join(dataDir, 'scout-key');
  const keyringDir = join(dataDir, 'keyring');
  mkdirSync(keyringDir, { recursive: true, mode: 0o700 });

  let current: ScoutKey;
  try {
    current = parseScoutKey(readFileSync(currentPath, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`cannot read the Scout key ${currentPath}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    current = generateScoutKey();
    writePrivate(currentPath, `${current.keyBase64}\n`);
    log.info({ fingerprint: current.fingerprint }, 'generated the Scout key');
  }

  return {
    current(): ScoutKey {
      return current;
    },
    /** The current key first, then the retired ones. */
    all(): ScoutKey[] {
      const retired = readdirSync(keyringDir)
        .filter((name) => /^[0-9a-f]{64}$/.test(name))
        .map((name) => parseScoutKey(readFileSync(join(keyringDir, name), 'utf8')));
      return [current, ...retired.filter((k) => k.fingerprint !== current.fingerprint)];
    },
    /** Retires the current key into the keyring and makes a new one. */
    rotate(): ScoutKey {
      writePrivate(join(keyringDir, current.fingerprint), `${current.keyBase64}\n`);
      const next = generateScoutKey();
      writePrivate(currentPath, `${next.keyBase64}\n`);
      log.info({ retired: current.fingerprint, fingerprint: next.fingerprint }, 'rotated the Scout key');
      current = next;
      return next;
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
