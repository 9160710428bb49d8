import { z } from 'zod';
import { isNamespaceComponent, NAMESPACE_RULE } from '../namespace.ts';

/**
 * The field rules of the `/backup/*` protocol, each written once: the Station's routes check
 * them, the Scout and its CLI check what they send, the tests build what passes them.
 */

/** A job fingerprint as the protocol carries it: the full SHA-256 or its first 8 characters. */
const FINGERPRINT = /^(?:[0-9a-f]{8}|[0-9a-f]{64})$/;
export const FINGERPRINT_RULE = '8 or 64 lowercase hex characters';
export const isFingerprint = (value: string): boolean => FINGERPRINT.test(value);

/** A SHA-256 in lowercase hex (archive checksums, token hashes, key fingerprints). */
const SHA256_HEX = /^[0-9a-f]{64}$/;
export const SHA256_RULE = '64 lowercase hex characters';
export const isSha256Hex = (value: string): boolean => SHA256_HEX.test(value);

/** A stored snapshot's file name, as the snapshot list gives it. */
const SNAPSHOT_FILENAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.tar\.zst$/;
export const SNAPSHOT_FILENAME_RULE =
  'a snapshot file name ending in .tar.zst, as the snapshot list gives it';
export const isSnapshotFilename = (value: string): boolean =>
  value.length <= 255 && SNAPSHOT_FILENAME.test(value) && !value.includes('..');

/** `YYYY-MM-DDTHH:MM:SSZ`, a real UTC second. */
export const TIMESTAMP_RULE = 'UTC in the form YYYY-MM-DDTHH:MM:SSZ';
export function isUtcSecond(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && utcSecond(ms) === value;
}
/**
 * The protocol's form of a moment, `YYYY-MM-DDTHH:MM:SSZ` (a snapshot's `timestamp`, the time
 * in its stored name): the one place it is written.
 */
export const utcSecond = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,200}$/;
export const IDEMPOTENCY_KEY_RULE = '1 to 200 characters of A-Z a-z 0-9 . _ : -';

export const componentField = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .refine(isNamespaceComponent, `${field} must be ${NAMESPACE_RULE}`);
export const fingerprintField = (field: string) =>
  z.string({ error: `${field} is required` }).refine(isFingerprint, `${field} must be ${FINGERPRINT_RULE}`);
export const sha256Field = (field: string) =>
  z.string({ error: `${field} is required` }).refine(isSha256Hex, `${field} must be ${SHA256_RULE}`);
export const timestampField = (field: string) =>
  z.string({ error: `${field} is required` }).refine(isUtcSecond, `${field} must be ${TIMESTAMP_RULE}`);
export const idempotencyKeyField = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .regex(IDEMPOTENCY_KEY, `${field} must be ${IDEMPOTENCY_KEY_RULE}`);
/** A whole number of bytes ≥ `min`, within JavaScript's exact integers. */
export const byteCountField = (field: string, min = 0) =>
  z
    .number({ error: `${field} must be a whole number` })
    .int(`${field} must be a whole number`)
    .min(min, `${field} must be ${min === 1 ? 'a positive integer' : `at least ${min}`}`)
    .max(Number.MAX_SAFE_INTEGER);
/** A query value that is a nonnegative decimal integer (`?offset=…`). */
export const decimalQueryField = (field: string, rule: string) =>
  z
    .string({ error: `${field} is required: ${rule}` })
    .regex(/^\d{1,16}$/, `${field} must be ${rule}`)
    .transform(Number)
    .refine(Number.isSafeInteger, `${field} must be ${rule}`);
