import { logger } from '../../core/log.ts';
import { planRetention } from '../retention/plan.ts';
import { SnapshotLocked } from '../storage/store-errors.ts';
import type { JobKey, UploadDeps } from './types.ts';

const log = logger.child({ mod: 'station/retention' });

/**
 * Deletes what the job's retention policy does not keep (src/station/retention/policy.ts),
 * never `justStored`, a protected snapshot, nor one whose object is still locked. Returns the
 * deleted names.
 */
export async function applyRetention(
  deps: Pick<UploadDeps, 'settings' | 'index' | 'store' | 'clock' | 'jobRetention'>,
  ref: JobKey,
  justStored: string,
): Promise<string[]> {
  const policy = deps.jobRetention ? await deps.jobRetention.effective(ref) : await deps.settings.read();
  const plan = planRetention(await deps.index.list(ref), policy, deps.clock.now(), justStored);
  if (plan.locked.length > 0) {
    log.info(
      { ...ref, locked: plan.locked.length },
      'retention left snapshots whose objects are still locked',
    );
  }
  const deleted: string[] = [];
  for (const victim of plan.deleted) {
    try {
      await deps.store.remove({ ...ref, filename: victim.filename });
    } catch (error) {
      // The Station's date has passed but the bucket still locks it (clocks differ): next time.
      if (!(error instanceof SnapshotLocked)) throw error;
      log.warn(
        { ...ref, filename: victim.filename },
        'retention could not delete a snapshot: the bucket still locks it',
      );
      continue;
    }
    await deps.index.remove(ref, victim.filename);
    deleted.push(victim.filename);
  }
  return deleted;
}
