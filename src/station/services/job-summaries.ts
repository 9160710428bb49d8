/**
 * `GET /api/jobs`: one row per job, rated and paged inside the database. A job's aggregate
 * (count, bytes, newest, oldest) and its health are computed in one statement, whose answer is
 * one JSON text: PGlite decodes result rows slowly in JavaScript (~300 ms for 10,000 rows), and
 * only the page's jobs carry their newest snapshot, recent sizes, drill and instance facts.
 */
import { type SQL, sql } from 'drizzle-orm';
import { badRequest } from '../../core/errors.ts';
import {
  JOB_HEALTH,
  JOB_PROBLEMS,
  type JobHealth,
  type JobProblem,
  type JobSnapshotsPage,
  type JobSummary,
  type JobsPage,
} from '../../shared/protocol/jobs.ts';
import type { JobsQuery } from '../../shared/protocol/jobs-query.ts';
import type { StationDb } from '../db/open.ts';
import { attentionRankSql, healthRankSql, JOB_HEALTH_RULES, problemsSql } from './job-health.ts';
import type { JobKey, SnapshotIndex } from './snapshot-index.ts';
import { checkJobRef, snapshotView } from './snapshots.ts';

/** The size chart of a job's row draws at most this many of its newest snapshots. */
export const RECENT_SIZES_MAX = 60;

/** Where a page ends: the order's key of its last job. */
type Cursor = [hostRank: number, scoutId: string, instanceId: string, jobRank: number, jobName: string];

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(text: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(c) &&
      c.length === 5 &&
      Number.isInteger(c[0]) &&
      typeof c[1] === 'string' &&
      typeof c[2] === 'string' &&
      Number.isInteger(c[3]) &&
      typeof c[4] === 'string'
    )
      return c as Cursor;
  } catch {
    // answered below
  }
  throw badRequest('cursor: not a cursor this Station gave (pass next_cursor of the page before)');
}

/** Rows as drizzle's two drivers answer `execute`: PGlite `{rows}`, postgres.js an array. */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: T[] }).rows ?? [])) as T[];
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A job of the page as the statement returns it (ms times, problems as booleans). */
interface PageRow {
  host_rank: number;
  job_rank: number;
  health_rank: number;
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  snapshot_count: number;
  total_bytes: number;
  missing_count: number;
  unusual_count: number;
  protected_count: number;
  oldest_stored_at: number | null;
  problems: Record<JobProblem, boolean>;
  newest: {
    name: string;
    size_bytes: number;
    mtime: number;
    stored_at: number;
    unusual: string | null;
  } | null;
  recent: [number, boolean][] | null;
  drill: {
    filename: string;
    status: 'ok' | 'failed';
    files: number;
    bytes: number;
    error: string | null;
    finished_at: number;
  } | null;
  instance: {
    key_fingerprint: string | null;
    advertised_url: string | null;
    last_seen_at: number | null;
  } | null;
}

function summary(row: PageRow): JobSummary {
  return {
    scout_id: row.scout_id,
    scout_instance_id: row.scout_instance_id,
    job_name: row.job_name,
    health: JOB_HEALTH[row.health_rank] ?? 'failing',
    problems: JOB_PROBLEMS.filter((p) => row.problems[p]),
    newest: row.newest
      ? {
          name: row.newest.name,
          size_bytes: row.newest.size_bytes,
          mtime: iso(row.newest.mtime),
          stored_at: iso(row.newest.stored_at),
          unusual_reason: row.newest.unusual,
        }
      : null,
    oldest_stored_at: iso(row.oldest_stored_at),
    snapshot_count: row.snapshot_count,
    total_bytes: row.total_bytes,
    missing_count: row.missing_count,
    unusual_count: row.unusual_count,
    protected_count: row.protected_count,
    recent_sizes: (row.recent ?? []).map(([size]) => size),
    recent_unusual: (row.recent ?? []).flatMap(([, unusual], i) => (unusual ? [i] : [])),
    last_drill: row.drill ? { ...row.drill, finished_at: iso(row.drill.finished_at) ?? '' } : null,
    instance: {
      key_fingerprint: row.instance?.key_fingerprint ?? null,
      advertised_url: row.instance?.advertised_url ?? null,
      last_seen_at: iso(row.instance?.last_seen_at ?? null),
    },
  };
}

/** The text filters, on `job_summaries` (the health filter applies after rating). */
function jobFilter(query: JobsQuery): SQL {
  const parts: SQL[] = [sql`true`];
  if (query.scout_id !== undefined) parts.push(sql`s.scout_id = ${query.scout_id}`);
  if (query.scout_instance_id !== undefined)
    parts.push(sql`s.scout_instance_id = ${query.scout_instance_id}`);
  if (query.job_name !== undefined) parts.push(sql`s.job_name = ${query.job_name}`);
  if (query.q !== undefined) {
    const needle = query.q.toLowerCase();
    parts.push(
      sql`(strpos(lower(s.scout_id), ${needle}) > 0 OR strpos(lower(s.scout_instance_id), ${needle}) > 0 OR strpos(lower(s.job_name), ${needle}) > 0)`,
    );
  }
  return sql.join(parts, sql` AND `);
}

/** One statement: every matching job rated, the counts by health, and one page in order. */
function pageStatement(query: JobsQuery, now: number): SQL {
  const problems = problemsSql(
    {
      snapshotCount: sql`a.snapshot_count`,
      missingCount: sql`a.missing_count`,
      newestStoredAt: sql`a.newest_stored_at`,
      oldestStoredAt: sql`a.oldest_stored_at`,
      newestUnusual: sql`a.newest_unusual`,
      drillStatus: sql`d.status`,
      drillFinishedAt: sql`d.finished_at`,
    },
    now,
  );
  const p = Object.fromEntries(JOB_PROBLEMS.map((name) => [name, sql.raw(`r.p_${name}`)])) as Record<
    JobProblem,
    SQL
  >;
  const health = healthRankSql(p);
  const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const after = cursor
    ? sql`AND (k.host_rank, k.scout_id, k.scout_instance_id, k.job_rank, k.job_name) >
          (${cursor[0]}::int, ${cursor[1]}::text, ${cursor[2]}::text, ${cursor[3]}::int, ${cursor[4]}::text)`
    : sql``;
  const healthIs =
    query.health === undefined ? sql`` : sql`AND k.health_rank = ${JOB_HEALTH.indexOf(query.health)}::int`;
  const order = sql`host_rank, scout_id, scout_instance_id, job_rank, job_name`;
  return sql`
WITH agg AS (
  SELECT s.scout_id, s.scout_instance_id, s.job_name, s.snapshot_count, s.total_bytes, s.missing_count,
    s.unusual_count, s.protected_count, s.newest_stored_at, s.oldest_stored_at, s.newest_unusual
  FROM job_summaries s
  WHERE ${jobFilter(query)}
), rated AS (
  SELECT a.*,
    ${sql.join(
      JOB_PROBLEMS.map((name) => sql`${problems[name]} AS ${sql.raw(`p_${name}`)}`),
      sql`, `,
    )}
  FROM agg a
  LEFT JOIN drills d
    ON d.scout_id = a.scout_id AND d.scout_instance_id = a.scout_instance_id AND d.job_name = a.job_name
), ranked AS (
  SELECT r.*, ${health} AS health_rank,
    ${attentionRankSql(health, sql`r.p_newest_unusual`)} AS job_rank
  FROM rated r
), keyed AS (
  SELECT q.*, min(q.job_rank) OVER (PARTITION BY q.scout_id) AS host_rank FROM ranked q
), page AS (
  SELECT k.* FROM keyed k
  WHERE true ${healthIs} ${after}
  ORDER BY ${order}
  LIMIT ${query.limit + 1}
)
SELECT json_build_object(
  'counts', (SELECT coalesce(json_object_agg(c.health_rank, c.n), '{}') FROM
    (SELECT health_rank, count(*) AS n FROM keyed GROUP BY health_rank) c),
  'total', (SELECT count(*) FROM keyed k WHERE true ${healthIs}),
  'jobs', (SELECT coalesce(json_agg(j ORDER BY ${order}), '[]') FROM (
    SELECT g.host_rank, g.job_rank, g.health_rank, g.scout_id, g.scout_instance_id, g.job_name,
      g.snapshot_count, g.total_bytes, g.missing_count, g.unusual_count, g.protected_count, g.oldest_stored_at,
      json_build_object(${sql.join(
        JOB_PROBLEMS.map((name) => sql`${name}::text, ${sql.raw(`g.p_${name}`)}`),
        sql`, `,
      )}) AS problems,
      (SELECT json_build_object('name', n.filename, 'size_bytes', n.size_bytes, 'mtime', n.mtime,
          'stored_at', n.stored_at, 'unusual', n.unusual)
        FROM snapshots n
        WHERE n.scout_id = g.scout_id AND n.scout_instance_id = g.scout_instance_id
          AND n.job_name = g.job_name AND NOT n.missing
        ORDER BY n.taken_at DESC, n.stored_at DESC, n.filename DESC LIMIT 1) AS newest,
      (SELECT json_agg(json_build_array(x.size_bytes, x.unusual IS NOT NULL) ORDER BY x.taken_at, x.stored_at, x.filename)
        FROM (SELECT size_bytes, unusual, taken_at, stored_at, filename FROM snapshots x
          WHERE x.scout_id = g.scout_id AND x.scout_instance_id = g.scout_instance_id
            AND x.job_name = g.job_name AND NOT x.missing
          ORDER BY x.taken_at DESC, x.stored_at DESC, x.filename DESC LIMIT ${RECENT_SIZES_MAX}) x) AS recent,
      (SELECT json_build_object('filename', d.filename, 'status', d.status, 'files', d.files, 'bytes', d.bytes,
          'error', d.error, 'finished_at', d.finished_at)
        FROM drills d
        WHERE d.scout_id = g.scout_id AND d.scout_instance_id = g.scout_instance_id AND d.job_name = g.job_name) AS drill,
      (SELECT json_build_object('key_fingerprint', i.key_fingerprint, 'advertised_url', i.advertised_url,
          'last_seen_at', i.last_seen_at)
        FROM instances i WHERE i.scout_id = g.scout_id AND i.scout_instance_id = g.scout_instance_id) AS instance
    FROM page g) j)
)::text AS answer`;
}

/** The jobs page and one job's snapshots, read for the dashboard. */
export function createJobSummaries(deps: { db: StationDb; index: SnapshotIndex }) {
  return {
    async page(query: JobsQuery, now: number): Promise<JobsPage> {
      const [row] = rowsOf<{ answer: string }>(await deps.db.execute(pageStatement(query, now)));
      const answer = JSON.parse(row?.answer ?? '{}') as {
        counts: Record<string, number>;
        total: number;
        jobs: PageRow[];
      };
      const jobs = answer.jobs ?? [];
      const more = jobs.length > query.limit;
      const shown = more ? jobs.slice(0, query.limit) : jobs;
      const last = shown.at(-1);
      const counts = Object.fromEntries(
        JOB_HEALTH.map((h, i) => [h, Number(answer.counts?.[i] ?? 0)]),
      ) as Record<JobHealth, number>;
      return {
        jobs: shown.map(summary),
        next_cursor:
          more && last
            ? encodeCursor([
                last.host_rank,
                last.scout_id,
                last.scout_instance_id,
                last.job_rank,
                last.job_name,
              ])
            : null,
        total: Number(answer.total ?? 0),
        counts,
        rules: JOB_HEALTH_RULES,
        recent_sizes_max: RECENT_SIZES_MAX,
      };
    },

    /** Every snapshot of one job, newest first, files missing included (marked). */
    async snapshots(ref: JobKey): Promise<JobSnapshotsPage> {
      checkJobRef(ref);
      return { snapshots: (await deps.index.ofJob(ref)).map(snapshotView) };
    },

    /** Every instance the Station knows: those it saw and those with snapshots. */
    async instances() {
      const result = await deps.db.execute(sql`
        SELECT scout_id, scout_instance_id FROM instances
        UNION SELECT DISTINCT scout_id, scout_instance_id FROM snapshots
        ORDER BY scout_id, scout_instance_id`);
      return { instances: rowsOf<{ scout_id: string; scout_instance_id: string }>(result) };
    },
  };
}

export type JobSummaries = ReturnType<typeof createJobSummaries>;
