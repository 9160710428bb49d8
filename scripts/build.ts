/**
 * Builds dist/backupd.mjs: one esbuild bundle of src/main.ts with the SQL migrations
 * and the web apps (scripts/build-web.ts) embedded, the build commit stamped, and PGlite's
 * wasm and data files copied beside it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { buildWeb, describeWebBuild, WEB_ROLES } from './build-web.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

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

/** Each app's JavaScript must stay under this, gzipped (the budget). */
const WEB_JS_BUDGET_GZIP = 60 * 1024;

mkdirSync(dist, { recursive: true });
const started = performance.now();
const web = await buildWeb(root, join(dist, 'web'));
for (const report of web) {
  const gz = report.files.filter((f) => f.name.endsWith('.js')).reduce((sum, f) => sum + f.gzipBytes, 0);
  if (gz > WEB_JS_BUDGET_GZIP)
    throw new Error(`web/${report.role}: ${gz} bytes of gzipped JavaScript, over the 60 KiB budget`);
}
console.log(describeWebBuild(web));
await build({
  entryPoints: [join(root, 'src/main.ts')],
  outfile: join(dist, 'backupd.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  legalComments: 'none',
  define: { __BACKUPD_COMMIT__: JSON.stringify(gitCommit()) },
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  plugins: [embedMigrations, embedWebFiles],
  logLevel: 'warning',
});
chmodSync(join(dist, 'backupd.mjs'), 0o755);

// PGlite loads these beside the module that runs it, which is now the bundle.
const pgliteDist = dirname(require.resolve('@electric-sql/pglite'));
for (const file of ['pglite.wasm', 'pglite.data', 'initdb.wasm']) {
  copyFileSync(join(pgliteDist, file), join(dist, file));
}
console.log(`built dist/backupd.mjs in ${Math.round(performance.now() - started)} ms`);
