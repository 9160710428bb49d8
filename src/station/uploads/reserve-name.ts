import { numberedName, snapshotFileName, splitCounter } from '../../shared/protocol/snapshot-names.ts';
import { checkFilename } from '../storage/keys.ts';
import { liveSessionsOf, stagedUploadOf } from './sessions.ts';
import type { JobKey, UploadDeps } from './types.ts';

const MAX_CANDIDATES = 10_000;

/**
 * `preferred`, then `-2`, `-3`, … : the names a snapshot may take when the one before is taken.
 * A name that already carries a counter (`x-2`) continues with `x-3`, not `x-2-2`.
 */
function* nameCandidates(preferred: string): Generator<string> {
  checkFilename(preferred);
  const { stem, counter: first } = splitCounter(preferred);
  yield preferred;
  for (let n = first + 1; n < first + MAX_CANDIDATES; n += 1) yield numberedName(stem, n);
}

/**
 * The name a new upload will be stored under, chosen at initiation: `<job>__<time>__<fp8>`,
 * or `-2`, `-3`, … when a stored snapshot or another live session of the job has it (sessions
 * in `ignore`, about to be superseded, hold nothing). The one place a snapshot's name is chosen:
 * stores store under it or refuse (SnapshotExists: two initiations that raced for one name, or
 * a file put there by hand; registerStaged then gives the later session up).
 */
export async function reserveName(
  deps: UploadDeps,
  ref: JobKey,
  meta: { timestamp: string; fingerprint: string },
  ignore: ReadonlySet<string>,
): Promise<string> {
  const live = await liveSessionsOf(deps, ref);
  const reserved = new Set(
    live.filter((row) => !ignore.has(row.uploadId)).map((row) => stagedUploadOf(row).target.filename),
  );
  for (const name of nameCandidates(snapshotFileName(ref.jobName, meta.timestamp, meta.fingerprint))) {
    if (reserved.has(name)) continue;
    if (await deps.index.byName(ref, name)) continue;
    if (await deps.store.exists({ ...ref, filename: name })) continue;
    return name;
  }
  throw new Error(`no free snapshot name for ${ref.jobName}`);
}
