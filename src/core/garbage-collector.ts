import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type Collect = () => void;

/**
 * V8's own `gc`, taken from a fresh context while it is exposed (`--expose-gc` on for that
 * moment only), as a collection of `type`: a young-generation scavenge, or a full collection;
 * `flavor` `last-resort` makes the full collection V8's most thorough (what it runs before
 * giving up on memory: repeated until nothing more is freed, old space compacted, new space
 * shrunk to its smallest). Null if unavailable.
 */
export function collector(
  type: 'minor' | 'major',
  flavor: 'regular' | 'last-resort' = 'regular',
): Collect | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as
      | ((options: { type: 'minor' | 'major'; flavor: 'regular' | 'last-resort' }) => void)
      | undefined;
    return gc ? () => gc({ type, flavor }) : null;
  } catch {
    return null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
