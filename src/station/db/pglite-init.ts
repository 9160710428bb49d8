import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { logger } from '../../core/log.ts';
import {
  embeddedAsset,
  embeddedBlob,
  isSingleExecutable,
  selfCommand,
} from '../../core/single-executable.ts';
import { keepWasmOnBaselineCompiler } from '../../core/wasm-baseline.ts';

const log = logger.child({ mod: 'station/db' });

/** The hidden subcommand that runs initdb in a child process. */
export const INIT_COMMAND = '__pglite-init';

/**
 * PGlite's options for a cluster in `dir`. PGlite loads its wasm and data files from beside
 * the module that runs it; in the single executable they are assets inside it instead.
 */
/** The global WebAssembly object (Node's type definitions declare only its types). */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(bytes: ArrayBuffer): Promise<WebAssembly.Module> } }
).WebAssembly;

export async function pgliteOptions(dir: string) {
  keepWasmOnBaselineCompiler();
  const options = { dataDir: dir, postgresqlconf: ['shared_buffers = 16MB'] };
  if (!isSingleExecutable()) return options;
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
    wasm.compile(embeddedAsset('pglite.wasm')),
    wasm.compile(embeddedAsset('initdb.wasm')),
  ]);
  return { ...options, pgliteWasmModule, initdbWasmModule, fsBundle: embeddedBlob('pglite.data') };
}

/** Creates the cluster in `dir` (initdb) and closes it: the body of the child process. */
export async function initCluster(dir: string): Promise<void> {
  await (await PGlite.create(await pgliteOptions(dir))).close();
}

/**
 * On a fresh data dir, runs initdb in a child process of this same program: the memory
 * initdb touches (~600 MB resident) would otherwise stay with the Station until it restarts.
 * Falls back to doing it here when the child cannot run.
 */
export async function ensureCluster(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  const self = selfCommand([INIT_COMMAND, dir]);
  if (self) {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(self.command, self.args, {
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
