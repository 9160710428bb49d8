import { DAY_MS, HOUR_MS } from '../../core/clock.ts';
import type { RetentionPolicy } from './fields.ts';

/** What the policy looks at in a snapshot (times in ms). */
export interface Candidate {
  filename: string;
  /** The snapshot's own time (chosen by the Scout): keep_last follows it, as the list does. */
  takenAt: number;
  /** When the Station stored it (no client chooses it): calendar rules and within follow it. */
  storedAt: number;
}

export type Reason = 'last' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'within';

/** Period numbers in UTC; weeks start on Monday (1970-01-01 was a Thursday). */
const PERIODS = {
  hourly: (ms: number) => Math.floor(ms / HOUR_MS),
  daily: (ms: number) => Math.floor(ms / DAY_MS),
  weekly: (ms: number) => Math.floor((Math.floor(ms / DAY_MS) + 3) / 7),
  monthly: (ms: number) => {
    const d = new Date(ms);
    return d.getUTCFullYear() * 12 + d.getUTCMonth();
  },
  yearly: (ms: number) => new Date(ms).getUTCFullYear(),
} as const;

const byDisplayOrder = (a: Candidate, b: Candidate) =>
  b.takenAt - a.takenAt || b.storedAt - a.storedAt || (a.filename < b.filename ? 1 : -1);
const byArrival = (a: Candidate, b: Candidate) =>
  a.storedAt - b.storedAt || (a.filename < b.filename ? -1 : 1);

/**
 * The rules on their own: keep_last keeps the newest N by the snapshots' own time; each calendar
 * rule keeps, in each of its N most recent periods that hold a snapshot, the FIRST snapshot the
 * Station stored in that period (so later uploads can never push it out); within keeps what was
 * stored in the last N days. A snapshot is kept when any rule keeps it.
 */
function keptByRules(rows: Candidate[], policy: RetentionPolicy, now: number): Map<string, Set<Reason>> {
  const kept = new Map<string, Set<Reason>>();
  const keep = (row: Candidate, reason: Reason) => {
    const reasons = kept.get(row.filename) ?? new Set<Reason>();
    reasons.add(reason);
    kept.set(row.filename, reasons);
  };
  for (const row of [...rows].sort(byDisplayOrder).slice(0, policy.retention_keep_last)) keep(row, 'last');
  const arrivals = [...rows].sort(byArrival);
  for (const [rule, periodOf] of Object.entries(PERIODS) as [
    keyof typeof PERIODS,
    (ms: number) => number,
  ][]) {
    const count = policy[`retention_keep_${rule}`];
    if (count <= 0) continue;
    const firsts = new Map<number, Candidate>();
    for (const row of arrivals) {
      const period = periodOf(row.storedAt);
      if (!firsts.has(period)) firsts.set(period, row);
    }
    const recent = [...firsts.keys()].sort((a, b) => b - a).slice(0, count);
    for (const period of recent) keep(firsts.get(period) as Candidate, rule);
  }
  if (policy.retention_keep_within_days > 0) {
    const since = now - policy.retention_keep_within_days * DAY_MS;
    for (const row of rows) if (row.storedAt >= since) keep(row, 'within');
  }
  return kept;
}

/**
 * Which snapshots of one job the policy keeps, and why. No flush: the snapshots stored today
 * (UTC) count as one, the first of them, when deciding what stored before today is kept, so
 * however many uploads arrive today (whatever their timestamps), nothing stored before today
 * is deleted that one honest backup today would not have deleted, and today's first stays too.
 */
export function decide<T extends Candidate>(rows: T[], policy: RetentionPolicy, now: number) {
  const kept = keptByRules(rows, policy, now);
  const startOfToday = Math.floor(now / DAY_MS) * DAY_MS;
  const today = rows.filter((row) => row.storedAt >= startOfToday).sort(byArrival);
  if (today.length > 1 && today[0]) {
    const asIfOne = [...rows.filter((row) => row.storedAt < startOfToday), today[0]];
    for (const [filename, reasons] of keptByRules(asIfOne, policy, now)) {
      const all = kept.get(filename) ?? new Set<Reason>();
      for (const reason of reasons) all.add(reason);
      kept.set(filename, all);
    }
  }
  return {
    kept,
    deleted: rows.filter((row) => !kept.has(row.filename)),
  };
}
