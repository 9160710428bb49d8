import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { clock } from '../../core/clock.ts';
import type { CoreDb, CoreStorage } from '../../core/db/core-db.ts';
import { MIGRATIONS_TABLE, type MigrationTarget, runMigrations } from '../../core/db/migrate.ts';
import { loadMigrationFiles } from '../../core/db/migration-files.ts';
import { logger } from '../../core/log.ts';
import { tightenTree } from '../../core/private-files.ts';
import { ensureCluster, pgliteOptions } from './pglite-init.ts';
import { rememberReadsUntilWrite } from './pglite-reads.ts';
import * as schema from './schema.ts';

const log = logger.child({ mod: 'station/db' });

/** The Station's database with its whole schema typed (the core sees it as CoreDb). */
export type StationDb = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface StationDatabase extends CoreStorage {
  kind: 'pglite' | 'postgres';
  stationDb: StationDb;
}

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name text PRIMARY KEY, applied_at bigint NOT NULL)`;
const RECORD_MIGRATION = `INSERT INTO ${MIGRATIONS_TABLE} (name, applied_at) VALUES ($1, $2)`;
/** Serialises migrations when several Station processes start against one server. */
const MIGRATION_LOCK = `SELECT pg_advisory_xact_lock(7162534)`;

/** Either driver's database as the Station uses it (one schema, the core's tables in it). */
function stationDatabase(
  kind: StationDatabase['kind'],
  drizzled: unknown,
  connection: Pick<StationDatabase, 'ping' | 'close'>,
): StationDatabase {
  const stationDb = drizzled as StationDb;
  return { kind, db: stationDb as unknown as CoreDb, stationDb, tables: schema, ...connection };
}

async function openPglite(dataDir: string): Promise<StationDatabase> {
  const dir = join(dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await ensureCluster(dir);
  // A small shared_buffers keeps an idle Station near 200 MB instead of ~370 MB.
  const pg = await PGlite.create(await pgliteOptions(dir));
  const target: MigrationTarget = {
    async appliedNames() {
      await pg.exec(CREATE_MIGRATIONS_TABLE);
      const { rows } = await pg.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
      return new Set(rows.map((r) => r.name));
    },
    async apply(name, statements) {
      await pg.transaction(async (tx) => {
        for (const statement of statements) await tx.exec(statement);
        await tx.query(RECORD_MIGRATION, [name, clock.now()]);
      });
    },
  };
  await runMigrations(target, loadMigrationFiles('station'));
  // PGlite chmods the files initdb makes to 0666 and its relation cache files to 0644, whatever
  // the umask: made private here, after initdb and the first queries (pgdata itself is 0700).
  tightenTree(dir);
  // The ping asks the database itself, never a remembered answer.
  const ask = pg.query.bind(pg);
  rememberReadsUntilWrite(pg);
  return stationDatabase('pglite', drizzlePglite(pg, { schema }), {
    async ping() {
      await ask('SELECT 1');
    },
    async close() {
      if (pg.closed) return;
      await pg.exec('CHECKPOINT');
      await pg.close();
    },
  });
}

async function openPostgres(url: string): Promise<StationDatabase> {
  const sql = postgres(url, { max: 10, onnotice: () => {}, connect_timeout: 10 });
  const target: MigrationTarget = {
    async appliedNames() {
      // Under the lock too: two Stations creating the table at once collide in pg_type.
      await sql.begin(async (tx) => {
        await tx.unsafe(MIGRATION_LOCK);
        await tx.unsafe(CREATE_MIGRATIONS_TABLE);
      });
      const rows = await sql.unsafe<{ name: string }[]>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
      return new Set(rows.map((r) => r.name));
    },
    async apply(name, statements) {
      await sql.begin(async (tx) => {
        await tx.unsafe(MIGRATION_LOCK);
        const done = await tx.unsafe(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE name = $1`, [name]);
        if (done.length > 0) return;
        for (const statement of statements) await tx.unsafe(statement);
        await tx.unsafe(RECORD_MIGRATION, [name, clock.now()]);
      });
    },
  };
  try {
    await runMigrations(target, loadMigrationFiles('station'));
  } catch (cause) {
    await sql.end({ timeout: 1 });
    throw new Error(`cannot prepare the PostgreSQL database at DATABASE_URL: ${String(cause)}`, { cause });
  }
  return stationDatabase('postgres', drizzlePostgres(sql, { schema }), {
    async ping() {
      await sql`SELECT 1`;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  });
}

export async function openStationDatabase(options: {
  dataDir: string;
  databaseUrl: string | undefined;
}): Promise<StationDatabase> {
  const storage = options.databaseUrl
    ? await openPostgres(options.databaseUrl)
    : await openPglite(options.dataDir);
  log.info({ kind: storage.kind }, 'station storage open');
  return storage;
}
