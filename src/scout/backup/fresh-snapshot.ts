import { DAY_MS } from '../../core/clock.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';

/**
 * Whether a job's newest snapshot (taken when its stored name says) is `everyDays` old or
 * older, so the cycle packs a fresh one even if the fingerprint did not change: sizes do not
 * change with every edit (force_send_every_days; 0 = never).
 */
export function freshSnapshotDue(lastStoredAs: string | null, everyDays: number, now: number): boolean {
  if (everyDays <= 0 || lastStoredAs === null) return false;
  const takenAt = parseSnapshotName(lastStoredAs)?.takenAt ?? null;
  return takenAt !== null && now - takenAt >= everyDays * DAY_MS;
}
