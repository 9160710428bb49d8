import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { logger } from '../../core/log.ts';

const log = logger.child({ mod: 'station/db' });

/** The hidden subcommand that runs initdb in a child process. */
export const INIT_COMMAND = '__pglite-init';

export const pgliteOptions = (dir: string) => ({ dataDir: dir, postgresqlconf: ['shared_buffers = 16MB'] });

/** Creates the cluster in `dir` (initdb) and closes it: the body of the child process. */
export async function initCluster(dir: string): Promise<void> {
  await (await PGlite.create(pgliteOptions(dir))).close();
}

/**
 * On a fresh data dir, runs initdb in a child process of this same program: the memory
 * initdb touches (~600 MB resident) would otherwise stay with the Station until it restarts.
 * Falls back to doing it here when the child cannot run.
 */
export async function ensureCluster(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  const script = process.argv[1];
  if (script) {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [...process.execArgv, script, INIT_COMMAND, dir], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      child.on('error', () => resolve(null));
      child.on('exit', (exitCode) => resolve(exitCode));
    });
    if (code === 0 && existsSync(join(dir, 'PG_VERSION'))) return;
    log.warn({ code }, 'initdb in a child process failed; running it here');
  }
  await initCluster(dir);
}
