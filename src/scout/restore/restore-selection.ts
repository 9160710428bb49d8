// What a restore is asked to write and where: the `paths` and `destination` of
// POST /api/recovery/preview and /restore, and `--path` / `--dest` of `backupd scout restore`.
import { isAbsolute, normalize } from 'node:path';
import { unescapeName } from '../../shared/byte-names.ts';
import { byteString } from './byte-paths.ts';

/** Chosen paths a restore takes at most. */
export const MAX_CHOSEN_PATHS = 1000;

/** A choice that cannot be restored; the caller turns it into a 400 or a usage error. */
export class SelectionError extends Error {
  override name = 'SelectionError';
}

/**
 * Chosen paths (relative to the job folder, escaped as src/shared/byte-names.ts writes names)
 * as the restorer's byte strings: `a//b/` and `./a/b` are `a/b`; an absolute path, `..`, NUL
 * or an empty path is refused. `what` names the field in errors.
 */
export function chosenPaths(paths: string[], what: string): string[] {
  if (paths.length > MAX_CHOSEN_PATHS) throw new SelectionError(`${what}: at most ${MAX_CHOSEN_PATHS} paths`);
  const out = new Set<string>();
  for (const path of paths) {
    let bytes: string;
    try {
      bytes = byteString(unescapeName(path));
    } catch (error) {
      throw new SelectionError(`${what} "${path}": ${(error as Error).message}`);
    }
    if (bytes.includes('\0')) throw new SelectionError(`${what} "${path}" has a NUL byte`);
    if (bytes.startsWith('/')) {
      throw new SelectionError(
        `${what} "${path}" is absolute; give it relative to the job folder (keep/one.txt)`,
      );
    }
    const parts = bytes.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.includes('..'))
      throw new SelectionError(`${what} "${path}" has "..": only paths inside the job folder`);
    if (parts.length === 0) {
      throw new SelectionError(
        `${what} "${path}" names no file or folder; leave it out to restore the whole snapshot`,
      );
    }
    out.add(parts.join('/'));
  }
  return [...out];
}

/** A restore destination: an absolute folder without `..`, normalised. */
export function destinationFolder(destination: string, what: string): string {
  if (destination.includes('\0')) throw new SelectionError(`${what} has a NUL byte`);
  if (!isAbsolute(destination)) {
    throw new SelectionError(
      `${what} must be an absolute folder on the host (/srv/restored), not "${destination}"`,
    );
  }
  if (destination.split('/').includes('..')) throw new SelectionError(`${what} must not contain ".."`);
  const folder = normalize(destination);
  return folder.length > 1 ? folder.replace(/\/+$/, '') : folder;
}
