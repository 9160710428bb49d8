import { checkFilename } from './keys.ts';

export { snapshotFileName } from '../../shared/protocol/snapshot-names.ts';

const MAX_CANDIDATES = 10_000;
/** A Station-made name with its `-N` counter (`…__<fp8>-3.tar.zst`). */
const NUMBERED = /^(.*__[0-9a-f]{8})-(\d+)\.tar\.zst$/;

/**
 * `preferred`, then `-2`, `-3`, … : the names a snapshot may take when the one before is taken.
 * A name that already carries a counter (reserved as `x-2`) continues with `x-3`, not `x-2-2`.
 */
export function* nameCandidates(preferred: string): Generator<string> {
  checkFilename(preferred);
  const numbered = NUMBERED.exec(preferred);
  const stem = numbered ? (numbered[1] as string) : preferred.replace(/\.tar\.zst$/, '');
  const first = numbered ? Number(numbered[2]) : 1;
  yield preferred;
  for (let n = first + 1; n < first + MAX_CANDIDATES; n += 1) yield `${stem}-${n}.tar.zst`;
}
