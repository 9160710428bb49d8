import { badRequest } from '../../core/errors.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';
import { isSnapshotFilename } from '../../shared/protocol/fields.ts';

/** A snapshot file name (what the Station writes and a store lists): the protocol's one rule. */
export { isSnapshotFilename };

/** Every key a store builds passes these, so no path or object key leaves its root or prefix. */
export function checkComponent(field: string, value: string): void {
  if (!isNamespaceComponent(value)) throw badRequest(`${field} must be ${NAMESPACE_RULE}`);
}

export function checkFilename(filename: string): void {
  if (!isSnapshotFilename(filename)) {
    throw badRequest('filename must be a snapshot file name ending in .tar.zst (letters, digits, . _ -)');
  }
}
