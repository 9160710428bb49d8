// `relative_path` values from the API: '/'-separated, relative to the scan root, '.' for the
// root. Nothing they name may lie outside the scan root, symlinks included.
import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { badRequest, notFound } from '../../core/errors.ts';

/** What to do about a scan root that is missing (or is not a folder). */
export function scanRootProblem(scanRoot: string, exists: boolean): string {
  return `the scan root ${scanRoot} ${exists ? 'is not a folder' : 'does not exist'}: start the Scout with SCAN_ROOT set to the folder that holds the folders to back up (e.g. SCAN_ROOT=/srv), or create ${scanRoot}`;
}

/** What is wrong with the scan root as it is now (scanRootProblem), or null when it is a folder. */
export async function checkScanRoot(scanRoot: string): Promise<string | null> {
  const info = await stat(scanRoot).catch(() => null);
  return info?.isDirectory() ? null : scanRootProblem(scanRoot, info !== null);
}

/** The longest file or folder name (in bytes) of the file systems a scan root lives on. */
const MAX_NAME_BYTES = 255;

function refuse(problem: string): never {
  throw badRequest(`relative_path ${problem}`);
}

function segmentsOf(relativePath: string): string[] {
  if (typeof relativePath !== 'string' || relativePath === '') refuse('is required ("." for the scan root)');
  if (relativePath.includes('\0')) refuse('must not contain NUL characters');
  if (relativePath.includes('\\')) refuse('must use "/" as separator, not "\\"');
  if (relativePath.startsWith('/') || isAbsolute(relativePath) || /^[A-Za-z]:/.test(relativePath)) {
    refuse('must be relative to the scan root, not absolute');
  }
  const segments = relativePath.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) refuse('must not contain ".." segments');
  if (segments.some((segment) => Buffer.byteLength(segment) > MAX_NAME_BYTES)) {
    refuse(`names a file or folder longer than ${MAX_NAME_BYTES} bytes, which no file system holds`);
  }
  return segments;
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * The realpath of `target`, or of its deepest existing ancestor when it does not exist (yet).
 * A dangling symlink is refused: writing through it could land anywhere.
 */
async function realpathOfExisting(target: string, stop: string): Promise<string> {
  let current = target;
  for (;;) {
    try {
      return await realpath(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') refuse('leads through a symlink loop');
      if (code === 'ENAMETOOLONG') refuse('is longer than the file system allows');
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const link = await lstat(current).catch(() => null);
    if (link?.isSymbolicLink()) refuse('leads through a symlink whose target does not exist');
    if (current === stop) return current;
    current = dirname(current);
  }
}

/** The absolute (not symlink-resolved) path that `relativePath` names inside the scan root. */
export async function resolveInScanRoot(scanRoot: string, relativePath: string): Promise<string> {
  const segments = segmentsOf(relativePath);
  const root = resolve(scanRoot);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw notFound(scanRootProblem(root, false));
  }
  const target = segments.length === 0 ? root : join(root, ...segments);
  const real = await realpathOfExisting(target, root);
  if (!isInside(realRoot, real)) refuse('leads outside the scan root');
  return target;
}

/** `absolute` relative to the scan root, '/'-separated, '.' for the root itself. */
export function toRelative(scanRoot: string, absolute: string): string {
  const rel = relative(resolve(scanRoot), resolve(absolute));
  return rel === '' ? '.' : rel.split(sep).join('/');
}
