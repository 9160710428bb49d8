// What a job leaves out: its marker, hidden paths when include_hidden is false, and the
// gitignore-style `exclude` patterns (relative to the job folder; case-sensitive).
//
// Paths are bytes (src/scout/jobs/byte-order.ts). A pattern may name a byte that is not
// UTF-8 the way APIs and UIs show it, `\xHH` (src/shared/byte-names.ts): `latin1-caf\xe9.txt`
// matches the file whose name ends in the single byte 0xE9. Other backslashes keep their
// gitignore meaning (`\\` is a backslash, `\#` a literal `#`). Patterns and paths are matched
// as byte strings, so `?` and `[...]` stand for one byte.
import ignore from 'ignore';
import { type ByteString, byteString, utf8ByteString } from './byte-order.ts';
import { MARKER } from './marker.ts';

export interface Excluder {
  /** `relPath` as bytes, or as text (UTF-8). */
  excluded(relPath: Uint8Array | string, isDir: boolean): boolean;
  /** Why `relPath` is left out: 'marker', 'hidden' or the pattern; null when it is included. */
  reason(relPath: Uint8Array | string, isDir: boolean): string | null;
  /** `excluded` for a path already held as a byte string (the walk's form). */
  excludesBytes(relPath: ByteString, isDir: boolean): boolean;
}

const GLOB_SPECIAL = new Set([...'*?[]!#\\ ']);

/** A pattern as a byte string: `\xHH` becomes that byte (escaped when gitignore would read it as syntax). */
function patternBytes(pattern: string): ByteString {
  return utf8ByteString(pattern).replace(/\\(\\|x([0-9a-fA-F]{2}))/g, (whole, _escaped, hex) => {
    if (hex === undefined) return whole;
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return GLOB_SPECIAL.has(char) ? `\\${char}` : char;
  });
}

const DOT = 0x2e;

function normalize(relPath: ByteString): ByteString {
  if (relPath.charCodeAt(0) !== DOT && !relPath.endsWith('/')) return relPath;
  return relPath.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

/**
 * Paths tested by one `ignore` instance before a fresh one takes over: it caches the answer
 * for every path it was asked about (and their parents), which over a walk of a million files
 * held ~130 bytes per file, so the walk's memory grew with the job's size.
 */
const CACHED_PATHS = 10_000;

export function createExcluder(patterns: string[], includeHidden: boolean): Excluder {
  const written = new Map(patterns.map((pattern) => [patternBytes(pattern), pattern]));
  const compile = () =>
    ignore({ ignorecase: false }).add([...written.keys()].map((pattern) => ({ pattern })));
  let rules = compile();
  let tested = 0;

  function why(relPath: ByteString, isDir: boolean): string | null {
    const path = normalize(relPath);
    if (path === '' || path === '.') return null;
    if (path === MARKER && !isDir) return 'marker';
    // Some segment starts with '.': the first, or one after a '/'.
    if (!includeHidden && (path.charCodeAt(0) === DOT || path.includes('/.'))) return 'hidden';
    if (written.size === 0 || !ignore.isPathValid(path)) return null;
    tested += 1;
    if (tested % CACHED_PATHS === 0) rules = compile();
    const result = rules.test(isDir ? `${path}/` : path);
    if (!result.ignored) return null;
    const pattern = result.rule?.pattern;
    return pattern === undefined ? 'excluded' : (written.get(pattern) ?? pattern);
  }

  const reason = (relPath: Uint8Array | string, isDir: boolean) =>
    why(typeof relPath === 'string' ? utf8ByteString(relPath) : byteString(relPath), isDir);

  return {
    excluded: (relPath, isDir) => reason(relPath, isDir) !== null,
    reason,
    excludesBytes: (relPath, isDir) => why(relPath, isDir) !== null,
  };
}
