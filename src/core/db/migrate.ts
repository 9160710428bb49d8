import { logger } from '../log.ts';
import type { MigrationFile } from './migration-files.ts';

const log = logger.child({ mod: 'core/db/migrate' });

/** What a dialect must offer to apply migrations: each migration runs atomically. */
export interface MigrationTarget {
  appliedNames(): Promise<Set<string>>;
  apply(name: string, statements: string[]): Promise<void>;
}

export const MIGRATIONS_TABLE = 'backupd_migrations';

export function splitStatements(sql: string): string[] {
  return sql
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export async function runMigrations(target: MigrationTarget, files: MigrationFile[]): Promise<number> {
  const applied = await target.appliedNames();
  let count = 0;
  for (const file of files) {
    if (applied.has(file.name)) continue;
    log.info({ migration: file.name }, 'applying migration');
    await target.apply(file.name, splitStatements(file.sql));
    count += 1;
  }
  return count;
}
