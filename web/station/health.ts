/** Per-job health at a glance: how old the newest snapshot is and what looks wrong. */
import type { OverviewJob, OverviewSnapshot } from '../../src/shared/protocol/overview.ts';
import { type DrillBadge, drillBadge, WEEKLY_DAYS } from '../common/drill.tsx';
import { ageSeconds } from '../common/format.ts';

/** A job whose newest snapshot is older than this is flagged stale. */
export const STALE_AFTER_DAYS = 2;

export const STALE_RULE = `Stale: the newest snapshot of the job was stored more than ${STALE_AFTER_DAYS} days ago.`;
export const UNUSUAL_RULE =
  'Unusual: a snapshot less than half or more than double the size of the one before it, or made with another Scout key. It is stored all the same; have a look.';
export const MISSING_RULE = 'Missing: the index lists the snapshot but its file is gone from the disk.';

export type Health = 'ok' | 'stale' | 'unusual' | 'missing' | 'empty';

export interface JobHealth {
  latest: OverviewSnapshot | null;
  /** Seconds since the newest snapshot was stored; null without one. */
  age: number | null;
  stale: boolean;
  unusualCount: number;
  missingCount: number;
  totalBytes: number;
  /** The worst of the flags, for the badge. */
  health: Health;
  /** The red drill badge, or null. */
  drill: DrillBadge | null;
  /** How much the job needs a look: 3 failing, 2 stale, 1 worth a look, 0 fine (lists sort by it). */
  severity: number;
}

export function jobHealth(job: OverviewJob, now = Date.now()): JobHealth {
  const present = job.snapshots.filter((s) => !s.missing);
  const latest = present.at(-1) ?? null;
  const age = latest?.mtime ? ageSeconds(latest.mtime, now) : null;
  const stale = age !== null && age > STALE_AFTER_DAYS * 86400;
  const unusualCount = job.snapshots.filter((s) => s.unusual).length;
  const missingCount = job.snapshots.length - present.length;
  const health: Health =
    latest === null
      ? 'empty'
      : missingCount > 0
        ? 'missing'
        : stale
          ? 'stale'
          : latest.unusual
            ? 'unusual'
            : 'ok';
  // The Station does not know the Scout's drill_schedule (the drill record does not carry it):
  // it assumes the default weekly schedule, so "Not proven recently" means no drill passed in
  // 14 days (or, never drilled, the oldest snapshot is older than that).
  const drill = drillBadge(job.last_drill, WEEKLY_DAYS, present[0]?.mtime ?? null, now);
  const severity =
    health === 'missing' || health === 'empty' || job.last_drill?.status === 'failed'
      ? 3
      : stale
        ? 2
        : drill || health === 'unusual'
          ? 1
          : 0;
  return {
    latest,
    age,
    stale,
    unusualCount,
    missingCount,
    totalBytes: present.reduce((sum, s) => sum + s.size_bytes, 0),
    health,
    drill,
    severity,
  };
}

const BADGES: Record<Health, { text: string; tone: string; title: string }> = {
  ok: { text: 'OK', tone: 'ok', title: 'A recent snapshot, nothing unusual about the newest one.' },
  stale: { text: 'Stale', tone: 'warn', title: STALE_RULE },
  unusual: { text: 'Unusual', tone: 'warn', title: `The newest snapshot is unusual. ${UNUSUAL_RULE}` },
  missing: { text: 'Files missing', tone: 'bad', title: MISSING_RULE },
  empty: { text: 'No snapshots', tone: 'bad', title: 'No snapshot of this job is stored.' },
};

export const healthBadge = (health: Health) => BADGES[health];
