/**
 * A job's health in words and badges. The Station decides the health and lists the problems
 * (GET /api/jobs, src/station/services/job-health.ts); this only says them, with the
 * thresholds the answer carries in `rules`.
 */
import type { JobHealthRules, JobSummary } from '../../src/shared/protocol/jobs.ts';
import { type DrillBadge, failedDrillBadge, notProvenBadge } from '../common/drill.tsx';

export const staleRule = (rules: JobHealthRules) =>
  `Stale: the newest snapshot of the job was stored more than ${rules.stale_after_days} days ago.`;
export const UNUSUAL_RULE =
  'Unusual: a snapshot less than half or more than double the size of the one before it, or made with another Scout key. It is stored all the same; have a look.';
export const MISSING_RULE = 'Missing: the index lists the snapshot but its file is gone from the disk.';
export const notProvenRule = (rules: JobHealthRules) =>
  `No restore drill passed in the last ${rules.proven_within_days} days (twice the Scouts' default weekly drill schedule; the Station does not know a Scout's own).`;

type Badge = { text: string; tone: string; title: string };

/** The job's main badge: the worst of what the Station found, drills apart (drillBadgeOf). */
export function healthBadge(job: JobSummary, rules: JobHealthRules): Badge {
  const has = (p: JobSummary['problems'][number]) => job.problems.includes(p);
  if (has('empty')) return { text: 'No snapshots', tone: 'bad', title: 'No snapshot of this job is stored.' };
  if (has('files_missing')) return { text: 'Files missing', tone: 'bad', title: MISSING_RULE };
  if (has('stale')) return { text: 'Stale', tone: 'warn', title: staleRule(rules) };
  if (has('newest_unusual'))
    return { text: 'Unusual', tone: 'warn', title: `The newest snapshot is unusual. ${UNUSUAL_RULE}` };
  return { text: 'OK', tone: 'ok', title: 'A recent snapshot, nothing unusual about the newest one.' };
}

/** The red drill badge the Station's answer calls for, or null. */
export function drillBadgeOf(job: JobSummary, rules: JobHealthRules, now = Date.now()): DrillBadge | null {
  if (job.problems.includes('drill_failed') && job.last_drill) return failedDrillBadge(job.last_drill, now);
  if (job.problems.includes('not_proven'))
    return notProvenBadge(rules.proven_within_days / 2, !job.last_drill);
  return null;
}

/** How much the job needs a look, as the Station ordered it: 3 failing … 0 fine (CSS `sev-N`). */
export function severity(job: JobSummary): number {
  if (job.health === 'failing') return 3;
  if (job.health === 'stale') return 2;
  return job.health === 'not_proven' || job.problems.includes('newest_unusual') ? 1 : 0;
}
