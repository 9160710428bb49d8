import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { StationDb } from '../db/open.ts';
import { stationKeys } from '../db/station-tables.ts';

const log = logger.child({ mod: 'station/signing-key' });

export interface SigningKeys {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const KEY_NAME = 'token_signing';
/** Where Stations before the shared key kept it; adopted into the database on first start. */
export const LEGACY_KEY_FILE = 'station-signing-key.pem';

function readLegacyPem(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The Ed25519 key that signs Station tokens, kept in the database (`station_keys`) so every
 * Station on one PostgreSQL signs and checks with the same key. The first Station to start
 * inserts it (`ON CONFLICT DO NOTHING`, then everyone reads back the one row that won), so two
 * Stations starting at once still agree. A data dir from before the shared key brings its
 * `station-signing-key.pem`: that key is what gets inserted, so tokens minted before the
 * upgrade stay valid, and the file is removed once the database holds it (the key lives in
 * one place). A file whose key lost to another Station's is left alone, with a warning. The
 * PEM is never logged.
 */
export async function loadSigningKey(db: StationDb, dataDir: string): Promise<SigningKeys> {
  const legacyPath = join(dataDir, LEGACY_KEY_FILE);
  const legacy = readLegacyPem(legacyPath);
  const candidate =
    legacy ?? generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  createPrivateKey(candidate); // a damaged legacy file fails here, before it is shared
  await db
    .insert(stationKeys)
    .values({ name: KEY_NAME, pem: candidate, createdAt: clock.now() })
    .onConflictDoNothing({ target: stationKeys.name });
  const [row] = await db
    .select({ pem: stationKeys.pem })
    .from(stationKeys)
    .where(eq(stationKeys.name, KEY_NAME));
  if (!row) throw new Error('the token signing key could not be stored in the database');
  if (legacy !== null && row.pem === candidate) {
    rmSync(legacyPath, { force: true });
    log.info({ file: legacyPath }, 'token signing key adopted into the database; the file is removed');
  } else if (legacy !== null) {
    log.warn(
      { file: legacyPath },
      "the database holds another Station's token signing key, which this Station now uses; tokens minted with this data dir's key are no longer accepted (mint new ones, then delete the file)",
    );
  }
  const privateKey = createPrivateKey(row.pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/**
 * The signing key, loaded once on first use and kept (a key is never replaced while the
 * database lives); a failed load is retried by the next call.
 */
export function sharedSigningKey(db: StationDb, dataDir: string): () => Promise<SigningKeys> {
  let loading: Promise<SigningKeys> | null = null;
  return () => {
    loading ??= loadSigningKey(db, dataDir).catch((error: unknown) => {
      loading = null;
      throw error;
    });
    return loading;
  };
}
