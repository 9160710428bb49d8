import { badRequest } from '../../core/errors.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';

/** A snapshot file name: what the Station writes and what a store lists. */
export const SNAPSHOT_FILENAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,250}\.tar\.zst$/;

/** Every key a store builds passes these, so no path or object key leaves its root or prefix. */
export function checkComponent(field: string, value: string): void {
  if (!isNamespaceComponent(value)) throw badRequest(`${field} must be ${NAMESPACE_RULE}`);
}

export function checkFilename(filename: string): void {
  if (!SNAPSHOT_FILENAME.test(filename) || filename.includes('..')) {
    throw badRequest('filename must be a snapshot file name ending in .tar.zst (letters, digits, . _ -)');
  }
}

export function isSnapshotFilename(name: string): boolean {
  return SNAPSHOT_FILENAME.test(name) && !name.includes('..');
}
