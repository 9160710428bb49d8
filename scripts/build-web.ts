/**
 * Builds the two web apps (web/station, web/scout): esbuild bundles each entry with its
 * CSS into content-hashed files, writes an index.html that loads them, and gzips every
 * file with fflate. The result, `dist/web/<role>/*.gz`, is what the servers serve and
 * what the main bundle embeds.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { gzipSync } from 'fflate';

export const WEB_ROLES = ['station', 'scout'] as const;

const TITLES: Record<(typeof WEB_ROLES)[number], string> = {
  station: 'backupd Station',
  scout: 'backupd Scout',
};

export interface WebBuildReport {
  role: string;
  files: { name: string; bytes: number; gzipBytes: number }[];
}

function indexHtml(title: string, script: string, styles: string[]): string {
  const links = styles.map((name) => `<link rel="stylesheet" href="/assets/${name}">`).join('');
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="color-scheme" content="light dark">' +
    `<title>${title}</title><link rel="icon" href="data:,">${links}` +
    `<script type="module" src="/assets/${script}"></script></head>` +
    '<body><div id="app"></div></body></html>'
  );
}

/** Builds one role's app into `<outDir>/<role>/`; returns the sizes of what it wrote. */
async function buildRole(root: string, outDir: string, role: (typeof WEB_ROLES)[number]) {
  const result = await build({
    entryPoints: [join(root, 'web', role, 'main.tsx')],
    bundle: true,
    write: false,
    outdir: '/assets',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  const files = new Map<string, Uint8Array>();
  for (const output of result.outputFiles) files.set(basename(output.path), output.contents);
  const names = [...files.keys()];
  const script = names.find((name) => name.endsWith('.js'));
  if (!script) throw new Error(`web/${role}: esbuild produced no JavaScript`);
  const styles = names.filter((name) => name.endsWith('.css'));
  files.set('index.html', new TextEncoder().encode(indexHtml(TITLES[role], script, styles)));

  const dir = join(outDir, role);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const report: WebBuildReport = { role, files: [] };
  for (const [name, contents] of files) {
    const gz = gzipSync(contents, { level: 9, mtime: 0 });
    writeFileSync(join(dir, `${name}.gz`), gz);
    report.files.push({ name, bytes: contents.byteLength, gzipBytes: gz.byteLength });
  }
  return report;
}

export async function buildWeb(root: string, outDir: string): Promise<WebBuildReport[]> {
  const reports: WebBuildReport[] = [];
  for (const role of WEB_ROLES) reports.push(await buildRole(root, outDir, role));
  return reports;
}

export function describeWebBuild(reports: WebBuildReport[]): string {
  return reports
    .map((report) => {
      const js = report.files.filter((file) => file.name.endsWith('.js'));
      const gz = js.reduce((sum, file) => sum + file.gzipBytes, 0);
      const raw = js.reduce((sum, file) => sum + file.bytes, 0);
      return `web/${report.role}: JavaScript ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzipped`;
    })
    .join('\n');
}
