import { readdirSync, readFileSync } from 'node:fs';
import type { Role } from '../config.ts';

export interface MigrationFile {
  name: string;
  sql: string;
}

/**
 * The SQL migrations of a role, in order. Read from the repository's `migrations/` folder
 * when running from source; the build replaces this module with one that embeds the files,
 * so the bundle never reads them relative to the working directory.
 */
export function loadMigrationFiles(role: Role): MigrationFile[] {
  const dir = new URL(`../../../migrations/${role}/`, import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: readFileSync(new URL(name, dir), 'utf8') }));
}
