/**
 * Builds the single executables (Node's SEA): a CommonJS bundle of the program (Node 24 runs
 * only CommonJS as an SEA's main script) goes into one preparation blob with PGlite's wasm
 * and data files as assets, and postject injects that blob into a copy of each target's node
 * binary. The blob holds no code cache and no snapshot, so it is the same for every CPU: the
 * node that runs the build writes it, and each target's node must be that same version.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'postject';

/** The fuse Node's SEA looks for (from Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
export const PGLITE_ASSETS = ['pglite.wasm', 'pglite.data', 'initdb.wasm'];

/** One executable to write: `nodeBinary` (a Linux node of the build's version) with the program in it. */
export interface SeaTarget {
  nodeBinary: string;
  output: string;
}

export interface SeaInputs {
  dist: string;
  pgliteDist: string;
  /** Writes the CommonJS bundle of the program to `outfile`. */
  bundle: (outfile: string) => Promise<void>;
  targets: SeaTarget[];
}

/** Writes each target's executable; returns their paths. */
export async function buildSingleExecutables({
  dist,
  pgliteDist,
  bundle,
  targets,
}: SeaInputs): Promise<string[]> {
  const work = join(dist, 'sea');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const main = join(work, 'backupd.cjs');
  await bundle(main);
  const blobFile = join(work, 'backupd.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blobFile,
      disableExperimentalSEAWarning: true,
      useCodeCache: false,
      useSnapshot: false,
      assets: Object.fromEntries(PGLITE_ASSETS.map((name) => [name, join(pgliteDist, name)])),
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'pipe' });
  const blob = readFileSync(blobFile);
  for (const { nodeBinary, output } of targets) {
    rmSync(output, { force: true });
    copyFileSync(nodeBinary, output);
    chmodSync(output, 0o755);
    await inject(output, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE });
  }
  // The CommonJS bundle stays (dist/sea/backupd.cjs: `node` runs it to debug the executable).
  rmSync(blobFile);
  return targets.map((target) => target.output);
}
