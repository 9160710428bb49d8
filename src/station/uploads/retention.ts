import { DAY_MS } from '../../core/clock.ts';
import type { JobOf, UploadDeps } from './types.ts';

/**
 * Deletes the job's snapshots beyond `retention_keep_last` (newest by their own time), never
 * `protect` nor one younger than `retention_keep_within_days`. Returns the deleted names.
 */
export async function applyRetention(
  deps: Pick<UploadDeps, 'settings' | 'index' | 'store' | 'clock'>,
  ref: JobOf,
  protect: string,
): Promise<string[]> {
  const { retention_keep_last, retention_keep_within_days } = await deps.settings.read();
  const keepSince =
    retention_keep_within_days > 0 ? deps.clock.now() - retention_keep_within_days * DAY_MS : Infinity;
  const victims = await deps.index.beyondRetention(ref, retention_keep_last, protect, keepSince);
  for (const victim of victims) {
    await deps.store.remove({ ...ref, filename: victim.filename });
    await deps.index.remove(ref, victim.filename);
  }
  return victims.map((v) => v.filename);
}
