// What a job leaves out: its marker, hidden paths when include_hidden is false, and the
// gitignore-style `exclude` patterns (relative to the job folder; case-sensitive).
import ignore from 'ignore';
import { MARKER } from './marker.ts';

export interface Excluder {
  excluded(relPath: string, isDir: boolean): boolean;
  /** Why `relPath` is left out: 'marker', 'hidden' or the pattern; null when it is included. */
  reason(relPath: string, isDir: boolean): string | null;
}

function normalize(relPath: string): string {
  return relPath.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

export function createExcluder(patterns: string[], includeHidden: boolean): Excluder {
  const rules = ignore({ ignorecase: false }).add(patterns.map((pattern) => ({ pattern })));

  function reason(relPath: string, isDir: boolean): string | null {
    const path = normalize(relPath);
    if (path === '' || path === '.') return null;
    if (path === MARKER && !isDir) return 'marker';
    if (!includeHidden && path.split('/').some((segment) => segment.startsWith('.'))) return 'hidden';
    if (!ignore.isPathValid(path)) return null;
    const result = rules.test(isDir ? `${path}/` : path);
    return result.ignored ? (result.rule?.pattern ?? 'excluded') : null;
  }

  return {
    excluded: (relPath, isDir) => reason(relPath, isDir) !== null,
    reason,
  };
}
