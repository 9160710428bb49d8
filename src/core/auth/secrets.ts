import { createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * N = 2^15 (r = 8): scrypt's working memory (128·r·N, 32 MiB + 3 KiB) is one allocation just
 * over glibc's largest dynamic mmap threshold (32 MiB), so it is mapped and unmapped without
 * moving the threshold. With N = 2^14 (16 MiB) every sign-in freed a 16 MiB mapping and glibc
 * raised its threshold to 16 MiB and its trim threshold to 32 MiB for the rest of the process:
 * each thread's malloc arena then kept up to 32 MiB it no longer used (the Scout idled at
 * 347 MiB after five backups instead of 256 on the 0.25 GiB bench dataset, issue #27).
 * Stored hashes carry their own parameters, so older ones still verify.
 */
const SCRYPT = { N: 32768, r: 8, p: 1, keylen: 32 };

/** SHA-256 hex: how session ids and tokens are stored. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A fresh secret: a readable prefix and 32 random bytes in base64url. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function newId(): string {
  return randomUUID();
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keylen } = SCRYPT;
  const hash = await scryptAsync(password, salt, keylen, { N, r, p, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', N, r, p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/**
 * Whether a stored hash was made with other scrypt parameters than new ones get (an N = 2^14
 * hash of an older release): sign-in then stores the password hashed anew (sessions.ts), so
 * its 16 MiB working memory stops moving glibc's thresholds (see SCRYPT).
 */
export function outdatedHash(stored: string): boolean {
  const [kind, n, r, p] = stored.split('$');
  return kind === 'scrypt' && (Number(n) !== SCRYPT.N || Number(r) !== SCRYPT.r || Number(p) !== SCRYPT.p);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, saltText, hashText] = stored.split('$');
  if (kind !== 'scrypt' || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64');
  const actual = await scryptAsync(password, Buffer.from(saltText, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return timingSafeEqual(actual, expected);
}

/**
 * A well-formed hash (random salt and digest) to verify against when the account does not
 * exist: it costs the same scrypt work as a real one, so timing does not tell.
 */
export const DUMMY_PASSWORD_HASH = [
  'scrypt',
  SCRYPT.N,
  SCRYPT.r,
  SCRYPT.p,
  randomBytes(16).toString('base64'),
  randomBytes(SCRYPT.keylen).toString('base64'),
].join('$');
