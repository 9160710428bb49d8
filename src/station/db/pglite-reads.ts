import type { PGlite } from '@electric-sql/pglite';

/** At most this many answers are kept; the set is emptied at every write. */
const MAX_ENTRIES = 64;
/** Answers of more rows are not kept (a listing, a page of the overview). */
const MAX_ROWS = 16;
/**
 * A read whose answer may change without a write (time, sequences, locks) or that builds large
 * documents is never answered again: only plain SELECTs are kept.
 */
const NOT_REPEATABLE =
  /\b(?:for\s+(?:update|share|no\s+key\s+update|key\s+share)|nextval|setval|currval|now|random|clock_timestamp|statement_timestamp|transaction_timestamp|current_date|current_time|current_timestamp|localtime|localtimestamp|pg_\w+|txid_\w+|json_agg|jsonb_agg|json_build_\w+|jsonb_build_\w+)\b/i;

type QueryOptions = { rowMode?: string; parsers?: unknown } & Record<string, unknown>;
type Answer = { rows: unknown[]; fields: unknown[]; affectedRows?: number } & Record<string, unknown>;

const copyOf = (answer: Answer): Answer => ({
  ...answer,
  rows: answer.rows.map((row) => (Array.isArray(row) ? [...row] : { ...(row as object) })),
});

/** The key of a repeatable read, or null when the query may write or is not repeatable. */
function readKey(sql: string, params: unknown, options: QueryOptions | undefined): string | null {
  if (!/^\s*select\s/i.test(sql) || NOT_REPEATABLE.test(sql)) return null;
  // drizzle's options: its row mode and its parsers (the same for every query it sends).
  const plain =
    options === undefined || Object.keys(options).every((k) => k === 'rowMode' || k === 'parsers');
  if (!plain) return null;
  try {
    return `${options?.rowMode ?? ''}|${options?.parsers ? 'p' : ''}|${sql}|${JSON.stringify(params ?? [])}`;
  } catch {
    return null;
  }
}

/**
 * Answers a repeated read on the embedded database (PGlite) from memory until the next write
 * (issue #27 item 5). PGlite is one connection inside this process, which alone opens its data
 * directory, so a SELECT asked again with no write since has the same answer; each query costs
 * ~1 CPU-ms through PGlite's protocol (measured here: ~30 of them per upload, two per 32 MiB
 * chunk for its token and session). Every statement that is not a plain SELECT, every `exec`
 * and every transaction (at its start and its end) empties the set, and an answer is kept only
 * if no write began while it was read: what a write changes (a revoked token, a session stored
 * or given up) is read from the database again. A Station on PostgreSQL (several Stations, one
 * database) keeps nothing.
 */
export function rememberReadsUntilWrite(pg: PGlite): void {
  const answers = new Map<string, Answer>();
  let generation = 0;
  const wrote = () => {
    generation += 1;
    answers.clear();
  };
  const query = pg.query.bind(pg) as (
    sql: string,
    params?: unknown[],
    options?: QueryOptions,
  ) => Promise<Answer>;
  const exec = pg.exec.bind(pg);
  const transaction = pg.transaction.bind(pg);
  const writing = async <T>(work: () => Promise<T>): Promise<T> => {
    wrote();
    try {
      return await work();
    } finally {
      wrote();
    }
  };

  Object.assign(pg, {
    async query(sql: string, params?: unknown[], options?: QueryOptions): Promise<Answer> {
      const key = readKey(sql, params, options);
      if (key === null) return writing(() => query(sql, params, options));
      const known = answers.get(key);
      if (known) return copyOf(known);
      const asked = generation;
      const answer = await query(sql, params, options);
      if (asked === generation && answer.rows.length <= MAX_ROWS) {
        if (answers.size >= MAX_ENTRIES) answers.clear();
        answers.set(key, copyOf(answer));
      }
      return answer;
    },
    exec: (...args: Parameters<PGlite['exec']>) => writing(() => exec(...args)),
    transaction: (...args: Parameters<PGlite['transaction']>) => writing(() => transaction(...args)),
  });
}
