import { nameCandidates, snapshotFileName } from '../storage/names.ts';
import { liveSessionsOf, stagedUploadOf } from './sessions.ts';
import type { JobKey, UploadDeps } from './types.ts';

/**
 * The name a new upload will be stored under, chosen at initiation: `<job>__<time>__<fp8>`,
 * or `-2`, `-3`, … when a stored snapshot or another live session of the job has it (sessions
 * in `ignore`, about to be superseded, hold nothing). The store still falls back to the next
 * free name if two initiations raced for the same one.
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
