/**
 * Builds dist/backupd, the single executable (Node's SEA): a CommonJS bundle of the program
 * (Node 24 runs only CommonJS as an SEA's main script) goes into a preparation blob with
 * PGlite's wasm and data files as assets, and postject injects the blob into a copy of the
 * node binary that runs the build.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'postject';

/** The fuse Node's SEA looks for (from Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
export const PGLITE_ASSETS = ['pglite.wasm', 'pglite.data', 'initdb.wasm'];

export interface SeaInputs {
  dist: string;
  pgliteDist: string;
  /** Writes the CommonJS bundle of the program to `outfile`. */
  bundle: (outfile: string) => Promise<void>;
}

export async function buildSingleExecutable({ dist, pgliteDist, bundle }: SeaInputs): Promise<string> {
  const work = join(dist, 'sea');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const main = join(work, 'backupd.cjs');
  await bundle(main);
  const blob = join(work, 'backupd.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: false,
      useSnapshot: false,
      assets: Object.fromEntries(PGLITE_ASSETS.map((name) => [name, join(pgliteDist, name)])),
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'pipe' });

  const executable = join(dist, 'backupd');
  rmSync(executable, { force: true });
  copyFileSync(process.execPath, executable);
  chmodSync(executable, 0o755);
  await inject(executable, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  // The CommonJS bundle stays (dist/sea/backupd.cjs: `node` runs it to debug the executable).
  rmSync(blob);
  return executable;
}
