// The order the walk visits a folder's entries in: the byte order of the fingerprint's
// records (src/scout/jobs/fingerprint.ts), so the fingerprint streams without a sorted list.
//
// Names are listed in byte order. A file's records sort by its name; a folder's by its name
// and a '/' ("docs/…"), so a folder "docs" comes after its siblings "docs-old", "docs.txt"
// (every name that is "docs" and then a byte below '/': the run after "docs" in name order),
// though its own record (when it is empty: "d docs") sorts before them.
import type { ByteString } from './byte-order.ts';

const SLASH = 0x2f;

/**
 * The index just past the run of names that follow `names[at]` and sort before its folder
 * records: those that start with it and continue with a byte below '/'. `at + 1` when none.
 */
export function runEnd(names: readonly ByteString[], at: number): number {
  const name = names[at] as ByteString;
  let end = at + 1;
  while (end < names.length) {
    const next = names[end] as ByteString;
    if (next.length <= name.length || !next.startsWith(name) || next.charCodeAt(name.length) >= SLASH) break;
    end += 1;
  }
  return end;
}
