import { numberedName, splitCounter } from '../../shared/protocol/snapshot-names.ts';
import { checkFilename } from './keys.ts';

export { snapshotFileName } from '../../shared/protocol/snapshot-names.ts';

const MAX_CANDIDATES = 10_000;

/**
 * `preferred`, then `-2`, `-3`, … : the names a snapshot may take when the one before is taken.
 * A name that already carries a counter (reserved as `x-2`) continues with `x-3`, not `x-2-2`.
 */
export function* nameCandidates(preferred: string): Generator<string> {
  checkFilename(preferred);
  const { stem, counter: first } = splitCounter(preferred);
  yield preferred;
  for (let n = first + 1; n < first + MAX_CANDIDATES; n += 1) yield numberedName(stem, n);
}
