import type { SnapshotRow } from '../services/snapshot-index.ts';
import type { RetentionPolicy } from './fields.ts';
import { decide, type Reason } from './policy.ts';

export type KeepReason = Reason | 'protected' | 'locked' | 'just stored';

/**
 * The policy's decision for one job's snapshots, with the Station's own guards on top: a
 * protected snapshot, one whose object is still locked (S3 Object Lock) and the one just
 * stored are never deleted.
 */
export function planRetention(rows: SnapshotRow[], policy: RetentionPolicy, now: number, justStored = '') {
  const { kept, deleted } = decide(rows, policy, now);
  const reasons = new Map<string, KeepReason[]>([...kept].map(([name, why]) => [name, [...why]]));
  const locked: SnapshotRow[] = [];
  const victims: SnapshotRow[] = [];
  for (const row of deleted) {
    const guard: KeepReason | null = row.protected
      ? 'protected'
      : row.lockedUntil !== null && row.lockedUntil > now
        ? 'locked'
        : row.filename === justStored
          ? 'just stored'
          : null;
    if (guard === null) victims.push(row);
    else reasons.set(row.filename, [guard]);
    if (guard === 'locked') locked.push(row);
  }
  return { reasons, deleted: victims, locked };
}
