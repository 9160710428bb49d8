/**
 * Restore drills at a glance, on both dashboards: when a job was last proven restorable and
 * whether that deserves a red badge (the last drill failed, or none succeeded within twice the
 * drill schedule's period).
 */
import type { DrillOutcome } from '../../src/shared/protocol/drills.ts';
import { ageSeconds, formatBytes, localTime, relativeTime } from './format.ts';

const DAY = 86400;
/** The default `drill_schedule` (`0 4 * * 0`) runs weekly. */
export const WEEKLY_DAYS = 7;

/**
 * The longest gap, in days, between two runs of a cron expression, as an upper bound read from
 * its fields (no full cron evaluation in the browser): a month restricted → a year, a day of
 * the month → 31 days, a day of the week → 7 days, an hour → 1 day, else 1 hour. Empty (drills
 * off) → null. A six-field expression (seconds first) is read without its seconds.
 */
export function cronPeriodDays(cron: string): number | null {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length === 0) return null;
  const [, hour = '*', dayOfMonth = '*', month = '*', dayOfWeek = '*'] =
    fields.length >= 6 ? fields.slice(1) : fields;
  const any = (field: string) => field === '*' || field === '?';
  if (!any(month)) return 366;
  if (!any(dayOfMonth)) return 31;
  if (!any(dayOfWeek)) return WEEKLY_DAYS;
  if (!any(hour)) return 1;
  return 1 / 24;
}

export interface DrillBadge {
  text: string;
  /** The rule or the drill's error, for the badge's tooltip. */
  title: string;
}

/**
 * The red badge a job's drills earn, or null. `periodDays` is the drill schedule's period (null:
 * drills are off, so only a failed drill is flagged); `since` is when the job had a snapshot to
 * drill (a job never drilled is flagged once it has had one for twice the period; null: unknown,
 * not flagged).
 */
export function drillBadge(
  drill: DrillOutcome | null | undefined,
  periodDays: number | null,
  since: string | null = null,
  now = Date.now(),
): DrillBadge | null {
  if (drill?.status === 'failed') return failedDrillBadge(drill, now);
  if (periodDays === null) return null;
  const limit = 2 * periodDays * DAY;
  if (drill) return ageSeconds(drill.finished_at, now) > limit ? notProvenBadge(periodDays, false) : null;
  return since !== null && ageSeconds(since, now) > limit ? notProvenBadge(periodDays, true) : null;
}

/** The badge of a failed drill, its error as the tooltip. */
export function failedDrillBadge(drill: DrillOutcome, now = Date.now()): DrillBadge {
  return {
    text: 'Drill failed',
    title: `The restore drill of ${drill.filename} ${relativeTime(drill.finished_at, now)} failed: ${drill.error ?? 'no reason given'}`,
  };
}

/** The badge of a job no drill proved within twice the schedule's period (`never`: never drilled). */
export function notProvenBadge(periodDays: number, never: boolean): DrillBadge {
  const rule = `No restore drill succeeded within twice the drill schedule (${formatDays(2 * periodDays)}).`;
  return { text: 'Not proven recently', title: never ? `${rule} This job was never drilled.` : rule };
}

function formatDays(days: number): string {
  return days >= 1 ? `${Math.round(days)} days` : `${Math.round(days * 24)} hours`;
}

/**
 * A `dl.facts` row: "Last proven restorable" with the passed drill's relative time ("never"
 * without one; the failed drill's time otherwise) and the red badge, the drill's error as its
 * tooltip.
 */
export function ProvenRestorable({
  drill,
  badge,
}: {
  drill: DrillOutcome | null | undefined;
  badge: DrillBadge | null;
}) {
  const detail = drill
    ? `${drill.filename}: ${drill.files} files, ${formatBytes(drill.bytes)} read; finished ${localTime(drill.finished_at)}`
    : 'No restore drill has run for this job yet.';
  return (
    <>
      <dt>Last proven restorable</dt>
      <dd>
        <span title={detail} data-testid="last-proven">
          {!drill
            ? 'never'
            : drill.status === 'ok'
              ? relativeTime(drill.finished_at)
              : 'not since the last drill'}
          {drill?.status === 'failed' ? <> (failed {relativeTime(drill.finished_at)})</> : null}
        </span>
        {badge ? (
          <>
            {' '}
            <span class="badge bad" title={badge.title} data-testid="drill-badge">
              {badge.text}
            </span>
          </>
        ) : null}
      </dd>
    </>
  );
}
