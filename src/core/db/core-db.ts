import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as pgTables from './core-tables.pg.ts';

/**
 * The shared core writes its queries once, against drizzle's common query builder. Both
 * dialects' builders answer the same calls (select/insert/update/delete, returning,
 * onConflictDoUpdate) with the same JavaScript values, because the two table files map
 * every column to the same JS type (text, number, boolean). The Scout's SQLite database is
 * therefore handed to the core under the PostgreSQL types; only calls that exist in both
 * dialects may be used in core code.
 */
export type CoreDb = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

export interface CoreTables {
  users: typeof pgTables.users;
  sessions: typeof pgTables.sessions;
  automationTokens: typeof pgTables.automationTokens;
  settings: typeof pgTables.settings;
}

/** What a role hands to the core: its database, the core's tables in its dialect, and how to close it. */
export interface CoreStorage {
  db: CoreDb;
  tables: CoreTables;
  /** Cheap round trip used by health checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
