/**
 * Builds dist/backupd.mjs: one esbuild bundle of src/main.ts with the SQL migrations
 * and the web apps (scripts/build-web.ts) embedded, the build commit stamped, and PGlite's
 * wasm and data files copied beside it; then the single executables dist/backupd (linux-x64)
 * and dist/backupd-linux-arm64 (scripts/build-sea.ts, scripts/node-binary.ts) and their
 * Debian packages dist/backupd_<version>_{amd64,arm64}.deb (scripts/build-deb.ts).
 * `--no-sea` skips the executables and packages (faster while editing the UI; the Docker image).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { buildDebianPackage, DEBIAN_ARCH } from './build-deb.ts';
import { buildSingleExecutables, PGLITE_ASSETS } from './build-sea.ts';
import { buildWeb, describeWebBuild, WEB_ROLES } from './build-web.ts';
import { type Cpu, nodeBinaryFor, shippedNodeVersion } from './node-binary.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

const gitCommit = (): string => git(['rev-parse', '--short=12', 'HEAD']) ?? 'unknown';
/** The build commit's date (RFC 2822, as Debian's changelog wants it). */
const gitDate = (): string =>
  git(['log', '-1', '--format=%cD']) ?? new Date().toUTCString().replace(/GMT$/, '+0000');

/** The single executables, one per CPU; each has a Debian package. */
const EXECUTABLES: { cpu: Cpu; file: string }[] = [
  { cpu: 'x64', file: 'backupd' },
  { cpu: 'arm64', file: 'backupd-linux-arm64' },
];

/** Replaces the disk reader of migrations with a module that holds their text. */
const embedMigrations: Plugin = {
  name: 'embed-migrations',
  setup(b) {
    b.onLoad({ filter: /core[\\/]db[\\/]migration-files\.ts$/ }, () => {
      const files: Record<string, { name: string; sql: string }[]> = {};
      for (const role of ['station', 'scout']) {
        const dir = join(root, 'migrations', role);
        files[role] = readdirSync(dir)
          .filter((name) => name.endsWith('.sql'))
          .sort()
          .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }));
      }
      return {
        loader: 'js',
        contents: `const files = ${JSON.stringify(files)};\nexport function loadMigrationFiles(role) { return files[role]; }\n`,
      };
    });
  },
};

/** Replaces the disk reader of the web apps with a module that holds them (gzip, base64). */
const embedWebFiles: Plugin = {
  name: 'embed-web-files',
  setup(b) {
    b.onLoad({ filter: /core[\\/]http[\\/]web[\\/]web-files\.ts$/ }, () => {
      const files: Record<string, { name: string; gzip: string }[]> = {};
      for (const role of WEB_ROLES) {
        const dir = join(dist, 'web', role);
        files[role] = readdirSync(dir)
          .filter((name) => name.endsWith('.gz'))
          .map((name) => ({
            name: name.slice(0, -3),
            gzip: readFileSync(join(dir, name)).toString('base64'),
          }));
      }
      return {
        loader: 'js',
        contents:
          `const files = ${JSON.stringify(files)};\n` +
          "export function loadWebFiles(role) { return files[role].map((f) => ({ name: f.name, gzip: Buffer.from(f.gzip, 'base64') })); }\n",
      };
    });
  },
};

/**
 * In the ESM bundle, Node's built-in modules are loaded with `require` when the code that uses
 * them first runs, instead of by static imports: a static import of a built-in this Node lacks
 * (node:sqlite, or zstd from node:zlib, before Node 22.15) fails while the bundle is linked,
 * before any of its code runs, so src/core/node-version.ts could never say which Node is needed.
 * `require` is the one the banner makes; a name imported from a built-in is read when used.
 */
const builtinsAtRunTime: Plugin = {
  name: 'builtins-at-run-time',
  setup(b) {
    b.onResolve({ filter: /^[a-z_:/0-9]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      if (args.kind === 'require-call') return { path: args.path, external: true };
      return { path: args.path, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** Each app's JavaScript must stay under this, gzipped (the budget). */
const WEB_JS_BUDGET_GZIP = 60 * 1024;

/** One bundle of the program: ESM for `dist/backupd.mjs`, CommonJS for the single executable. */
async function bundle(format: 'esm' | 'cjs', outfile: string): Promise<void> {
  await build({
    entryPoints: [join(root, 'src/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format,
    target: 'node22',
    sourcemap: format === 'esm' ? 'linked' : false,
    legalComments: 'none',
    // No test clock in what ships: src/core/clock.ts reads BACKUPD_TEST_CLOCK_FILE only from the source.
    define: { __BACKUPD_COMMIT__: JSON.stringify(gitCommit()), __BACKUPD_TEST_CLOCK__: 'false' },
    banner:
      format === 'esm'
        ? {
            js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
          }
        : {},
    plugins:
      format === 'esm'
        ? [builtinsAtRunTime, embedMigrations, embedWebFiles]
        : [embedMigrations, embedWebFiles, preferCommonJs],
    logLevel: 'warning',
  });
  writeFileSync(outfile, asciiOnly(readFileSync(outfile, 'utf8')));
}

/**
 * The bundle as ASCII: every character above U+007F written as its \u escape. esbuild escapes
 * them in strings already; what is left is in comments it keeps (three: an em dash, an ellipsis,
 * a Catalan word). One such character made V8 hold the whole 5 MiB source as two-byte text,
 * 10.4 MiB of the process's memory for as long as it runs; ASCII source is held as one byte per
 * character (the Scout: 5 MiB less resident, issue #27).
 */
function asciiOnly(code: string): string {
  return code.replace(/[\u0080-\u{10ffff}]/gu, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(
      '',
    ),
  );
}

/**
 * For the CommonJS bundle, packages resolve to their CommonJS builds where they have one:
 * ES module builds may use top-level await (PGlite) or `import.meta.url` (node-cron), which
 * CommonJS cannot hold. ES-module-only packages resolve as usual.
 */
const preferCommonJs: Plugin = {
  name: 'prefer-commonjs',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || args.kind === 'entry-point') return undefined;
      try {
        const path = createRequire(join(args.resolveDir, 'index.js')).resolve(args.path);
        return path.startsWith('/') ? { path } : undefined;
      } catch {
        return undefined;
      }
    });
  },
};

const skipSea = process.argv.includes('--no-sea');
mkdirSync(dist, { recursive: true });
const started = performance.now();
const web = await buildWeb(root, join(dist, 'web'));
for (const report of web) {
  const gz = report.files.filter((f) => f.name.endsWith('.js')).reduce((sum, f) => sum + f.gzipBytes, 0);
  if (gz > WEB_JS_BUDGET_GZIP)
    throw new Error(`web/${report.role}: ${gz} bytes of gzipped JavaScript, over the 60 KiB budget`);
}
console.log(describeWebBuild(web));
await bundle('esm', join(dist, 'backupd.mjs'));
chmodSync(join(dist, 'backupd.mjs'), 0o755);

// PGlite loads these beside the module that runs it, which is now the bundle.
const pgliteDist = dirname(require.resolve('@electric-sql/pglite'));
for (const file of PGLITE_ASSETS) copyFileSync(join(pgliteDist, file), join(dist, file));
console.log(`built dist/backupd.mjs in ${Math.round(performance.now() - started)} ms`);

const mib = (file: string) => `${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB`;
/** Why the executables cannot be built here, or null. In CI that is a failure, not a skip. */
function seaSkipReason(): string | null {
  if (skipSea) return '--no-sea';
  if (process.platform !== 'linux')
    return `the single executables are built on Linux, this is ${process.platform}`;
  const shipped = shippedNodeVersion(root);
  if (process.versions.node !== shipped) {
    return `they ship node ${shipped} and this build runs on node ${process.versions.node}: use \`npm run build\``;
  }
  return null;
}

const seaSkipped = seaSkipReason();
if (seaSkipped) {
  if (process.env.CI === 'true' && !skipSea)
    throw new Error(`cannot build the single executables: ${seaSkipped}`);
  console.log(`skipped the single executables and packages (${seaSkipped})`);
} else {
  const seaStarted = performance.now();
  const targets = EXECUTABLES.map(({ cpu, file }) => ({
    nodeBinary: nodeBinaryFor(cpu, root),
    output: join(dist, file),
  }));
  await buildSingleExecutables({ dist, pgliteDist, bundle: (outfile) => bundle('cjs', outfile), targets });
  const built = targets.map(({ output }) => `dist/${basename(output)} (${mib(output)})`).join(', ');
  console.log(`built ${built} in ${Math.round(performance.now() - seaStarted)} ms`);

  if (spawnSync('dpkg-deb', ['--version'], { stdio: 'ignore' }).error) {
    if (process.env.CI === 'true')
      throw new Error('cannot build the Debian packages: dpkg-deb is not installed');
    console.log('skipped the Debian packages (dpkg-deb is not installed)');
    process.exit(0);
  }
  const debStarted = performance.now();
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const [commit, date] = [gitCommit(), gitDate()];
  const packages = await Promise.all(
    EXECUTABLES.map(({ cpu, file }) =>
      buildDebianPackage({
        root,
        dist,
        arch: DEBIAN_ARCH[cpu],
        executable: join(dist, file),
        version,
        commit,
        date,
      }),
    ),
  );
  const debs = packages.map((deb) => `dist/${basename(deb)} (${mib(deb)})`).join(', ');
  console.log(`built ${debs} in ${Math.round(performance.now() - debStarted)} ms`);
}
