import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { drizzle, type SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';
import { clock } from '../../core/clock.ts';
import type { CoreDb, CoreStorage, CoreTables } from '../../core/db/core-db.ts';
import { MIGRATIONS_TABLE, type MigrationTarget, runMigrations } from '../../core/db/migrate.ts';
import { loadMigrationFiles } from '../../core/db/migration-files.ts';
import * as schema from './schema.ts';

type SqlValue = null | number | bigint | string | Uint8Array;

/**
 * drizzle's sqlite-proxy driver over node:sqlite's DatabaseSync. Statements run
 * synchronously, so no two queries ever interleave on the connection.
 */
function proxyFor(sqlite: DatabaseSync) {
  const cache = new Map<string, StatementSync>();
  const prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = sqlite.prepare(sql);
      statement.setReturnArrays(true);
      if (cache.size > 500) cache.clear();
      cache.set(sql, statement);
    }
    return statement;
  };
  return async (sql: string, params: unknown[], method: 'run' | 'all' | 'values' | 'get') => {
    const statement = prepare(sql);
    const values = params as SqlValue[];
    if (method === 'run') {
      statement.run(...values);
      return { rows: [] };
    }
    if (method === 'get') return { rows: statement.get(...values) as unknown as unknown[] };
    return { rows: statement.all(...values) as unknown as unknown[] };
  };
}

export type ScoutDb = SqliteRemoteDatabase<typeof schema>;

export interface ScoutStorage extends CoreStorage {
  scoutDb: ScoutDb;
}

export async function openScoutStorage(dataDir: string): Promise<ScoutStorage> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new DatabaseSync(join(dataDir, 'scout.db'));
  sqlite.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
  );
  const target: MigrationTarget = {
    async appliedNames() {
      sqlite.exec(
        `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name text PRIMARY KEY, applied_at integer NOT NULL)`,
      );
      const rows = sqlite.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all() as { name: string }[];
      return new Set(rows.map((r) => r.name));
    },
    async apply(name, statements) {
      sqlite.exec('BEGIN');
      try {
        for (const statement of statements) sqlite.exec(statement);
        sqlite
          .prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name, applied_at) VALUES (?, ?)`)
          .run(name, clock.now());
        sqlite.exec('COMMIT');
      } catch (error) {
        sqlite.exec('ROLLBACK');
        throw error;
      }
    },
  };
  await runMigrations(target, loadMigrationFiles('scout'));
  const scoutDb = drizzle(proxyFor(sqlite), { schema });
  return {
    db: scoutDb as unknown as CoreDb,
    scoutDb,
    tables: schema as unknown as CoreTables,
    async ping() {
      sqlite.prepare('SELECT 1').get();
    },
    async close() {
      if (sqlite.isOpen) sqlite.close();
    },
  };
}
