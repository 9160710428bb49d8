/**
 * The Linux node binary a single executable is made from, for each CPU backupd ships for.
 * The build's own node serves its own CPU. For another CPU, npm's `node-linux-<cpu>` package
 * of the same version is fetched once with `npm pack` (npm refuses to install a package for
 * another CPU as a dependency: EBADPLATFORM), checked against the integrity pinned here, and
 * kept under node_modules/.cache/backupd-build; later builds need no network.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export type Cpu = 'x64' | 'arm64';

/** The integrity of npm's `node-linux-<cpu>` packages, by node version. */
const INTEGRITY: Record<string, Record<Cpu, string>> = {
  '24.21.0': {
    x64: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
    arm64: 'sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==',
  },
};

/** The node version backupd ships: package.json's `node` devDependency, which `npm run build` runs on. */
export function shippedNodeVersion(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return pkg.devDependencies.node;
}

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/** The path of a Linux node binary of the shipped version for `cpu`; fetches it if needed. */
export function nodeBinaryFor(cpu: Cpu, root: string): string {
  const version = shippedNodeVersion(root);
  if (process.versions.node !== version) {
    throw new Error(
      `the single executables ship node ${version}, but the build runs on node ${process.versions.node}: run it with \`npm run build\` (it uses the project's node)`,
    );
  }
  if (process.platform === 'linux' && process.arch === cpu) return process.execPath;

  const name = `node-linux-${cpu}`;
  const cache = join(root, 'node_modules', '.cache', 'backupd-build', `${name}-${version}`);
  const binary = join(cache, 'bin', 'node');
  if (existsSync(binary)) return binary;

  const work = `${cache}.tmp`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  execFileSync(
    'npm',
    ['pack', `${name}@${version}`, '--pack-destination', work, '--prefer-offline', '--loglevel=error'],
    {
      cwd: work,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const tarball = join(work, `${name}-${version}.tgz`);
  const actual = integrityOf(tarball);
  const pinned = INTEGRITY[version]?.[cpu];
  if (actual !== pinned) {
    throw new Error(
      pinned
        ? `${name}@${version} from the registry has integrity ${actual}, not the pinned ${pinned}`
        : `no integrity pinned for ${name}@${version}: add \`npm view ${name}@${version} dist.integrity\` to scripts/node-binary.ts`,
    );
  }
  execFileSync('tar', [
    '-xzf',
    tarball,
    '-C',
    work,
    '--strip-components=1',
    'package/bin/node',
    'package/LICENSE',
  ]);
  rmSync(tarball);
  rmSync(cache, { recursive: true, force: true });
  renameSync(work, cache);
  return binary;
}
