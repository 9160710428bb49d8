import { ConfigError, loadStationConfig, type ServeFlags } from '../core/config.ts';
import { lockDataDir } from '../core/data-dir-lock.ts';
import { copyStationTables, nonEmptyTables } from '../station/db/move-database.ts';
import { openStationDatabase } from '../station/db/open.ts';

export interface MoveDatabaseFlags extends ServeFlags {
  to: string;
}

/**
 * `backupd station move-database --to postgres://…`: copies the embedded database (PGlite in
 * the data dir) into an empty PostgreSQL database, with the Station stopped. The embedded
 * database is left as it was; the Station uses the new one once DATABASE_URL points there.
 */
export async function stationMoveDatabase(flags: MoveDatabaseFlags): Promise<void> {
  if (!/^postgres(ql)?:\/\//.test(flags.to)) {
    throw new ConfigError('--to must be a postgres:// or postgresql:// URL');
  }
  const config = loadStationConfig(flags, { ...process.env, DATABASE_URL: '' });
  // The Station must be stopped: its lock is ours for the copy, or this fails naming it.
  const lock = lockDataDir(config.dataDir);
  try {
    const source = await openStationDatabase({ dataDir: config.dataDir, databaseUrl: undefined });
    try {
      const target = await openStationDatabase({ dataDir: config.dataDir, databaseUrl: flags.to });
      try {
        const occupied = await nonEmptyTables(target.stationDb);
        if (occupied.length > 0) {
          const list = occupied.map((t) => `${t.table} (${t.rows})`).join(', ');
          throw new ConfigError(
            `the target database already holds Station data: ${list}; move into an empty database`,
          );
        }
        let total = 0;
        await copyStationTables(source.stationDb, target.stationDb, (copy) => {
          total += copy.rows;
          process.stdout.write(`${copy.table}: ${copy.rows} rows\n`);
        });
        process.stdout.write(
          `moved ${total} rows into PostgreSQL. Set DATABASE_URL to that URL and start the Station;\n` +
            `the embedded database in ${config.dataDir}/pgdata is unchanged (remove it once the Station runs well).\n`,
        );
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  } finally {
    lock.release();
  }
}
