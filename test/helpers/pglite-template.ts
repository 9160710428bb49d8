// A fresh PGlite Station spends ~6 s and ~9 CPU-seconds in initdb before it can start, and the
// suite starts dozens. The cluster initdb makes is the same every time, so it is made once per
// PGlite version and initdb code (by the Station's own hidden `__pglite-init` subcommand) and
// copied into each fresh Station's data dir, where the Station finds it and skips initdb.
// The single executable's tests (and any test passing `freshCluster`) still run initdb.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function templateDir(root: string): string {
  const hash = createHash('sha256')
    .update(readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json')))
    .update(readFileSync(join(root, 'src/station/db/pglite-init.ts')))
    .digest('hex')
    .slice(0, 16);
  return join(tmpdir(), `backupd-test-pgdata-${hash}`);
}

/** The template cluster, made on first use; concurrent test files race safely (rename wins). */
function template(root: string): string {
  const dir = templateDir(root);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  const work = mkdtempSync(`${dir}.tmp-`);
  const cluster = join(work, 'pgdata');
  const made = spawnSync(process.execPath, [join(root, 'src/main.ts'), '__pglite-init', cluster], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (made.status !== 0 || !existsSync(join(cluster, 'PG_VERSION'))) {
    rmSync(work, { recursive: true, force: true });
    throw new Error(`making the PGlite template cluster failed: ${made.stderr}`);
  }
  try {
    renameSync(cluster, dir);
  } catch {
    // Another test file made it first: use theirs.
  }
  rmSync(work, { recursive: true, force: true });
  return dir;
}

/** Puts a copy of the template cluster into a data dir that has none yet. */
export function seedPgliteCluster(root: string, dataDir: string): void {
  const target = join(dataDir, 'pgdata');
  if (existsSync(target)) return;
  cpSync(template(root), target, { recursive: true });
}
