// Digests the tests compare with: one SHA-256 for bytes and text alike.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8. */
export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Lowercase hex SHA-256 of a file's bytes (small files: it is read whole). */
export const sha256File = (path: string): string => sha256(readFileSync(path));
