/**
 * Is a job OK? The one place that decides it (issue #28 item 6): `GET /api/jobs` filters and
 * orders by it and the dashboard only words what it answers. The rule runs inside the
 * database, over a job's aggregate (src/station/services/job-summaries.ts), so a thousand
 * hosts are rated without a row per snapshot leaving PostgreSQL.
 */

import { type SQL, sql } from 'drizzle-orm';
import { DAY_MS } from '../../core/clock.ts';
import {
  JOB_HEALTH,
  type JobHealth,
  type JobHealthRules,
  type JobProblem,
} from '../../shared/protocol/jobs.ts';

/** A job whose newest snapshot was stored longer ago than this is stale. */
export const STALE_AFTER_DAYS = 2;
/**
 * No restore drill passed within this many days: "not proven". Twice the Scouts' default weekly
 * `drill_schedule`: the Station does not know a Scout's own schedule (the drill report does not
 * carry it). A job never drilled is judged from its oldest present snapshot.
 */
export const PROVEN_WITHIN_DAYS = 14;

export const JOB_HEALTH_RULES: JobHealthRules = {
  stale_after_days: STALE_AFTER_DAYS,
  proven_within_days: PROVEN_WITHIN_DAYS,
};

/** The columns of a job's aggregate the rule reads (names in the query that rates jobs). */
export interface JobFacts {
  snapshotCount: SQL;
  missingCount: SQL;
  /** When the newest and the oldest present snapshot were stored (ms), null without one. */
  newestStoredAt: SQL;
  oldestStoredAt: SQL;
  newestUnusual: SQL;
  drillStatus: SQL;
  drillFinishedAt: SQL;
}

/** A health's position in JOB_HEALTH as an SQL integer literal (a parameter would be text). */
const rank = (health: JobHealth) => sql.raw(String(JOB_HEALTH.indexOf(health)));

/** Each problem as a boolean SQL expression over the job's facts at `now` (ms). */
export function problemsSql(f: JobFacts, now: number): Record<JobProblem, SQL> {
  const staleBefore = now - STALE_AFTER_DAYS * DAY_MS;
  const provenSince = now - PROVEN_WITHIN_DAYS * DAY_MS;
  return {
    empty: sql`(${f.snapshotCount} = 0)`,
    files_missing: sql`(${f.missingCount} > 0)`,
    drill_failed: sql`(coalesce(${f.drillStatus}, '') = 'failed')`,
    stale: sql`coalesce(${f.newestStoredAt} < ${staleBefore}, false)`,
    not_proven: sql`(coalesce(${f.drillStatus}, '') <> 'failed' AND coalesce(coalesce(${f.drillFinishedAt}, ${f.oldestStoredAt}) < ${provenSince}, false))`,
    newest_unusual: sql`coalesce(${f.newestUnusual}, false)`,
  };
}

/**
 * The health as its position in JOB_HEALTH (0 failing … 3 ok): the worst problem decides.
 * `p` holds the problems' columns as `problemsSql` computed them.
 */
export function healthRankSql(p: Record<JobProblem, SQL>): SQL {
  return sql`CASE
    WHEN ${p.empty} OR ${p.files_missing} OR ${p.drill_failed} THEN ${rank('failing')}
    WHEN ${p.stale} THEN ${rank('stale')}
    WHEN ${p.not_proven} THEN ${rank('not_proven')}
    ELSE ${rank('ok')} END`;
}

/**
 * How much a job needs a look, for ordering (0 first): its health's rank, except that an OK job
 * whose newest snapshot is unusual comes with the not-proven ones.
 */
export function attentionRankSql(healthRank: SQL, newestUnusual: SQL): SQL {
  const worthALook = rank('not_proven');
  return sql`CASE WHEN ${healthRank} > ${worthALook} AND ${newestUnusual} THEN ${worthALook} ELSE ${healthRank} END`;
}
