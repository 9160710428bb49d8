import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Role } from '../../config.ts';

/** One gzip-compressed file of a role's web app, by name (`index.html`, `main-HASH.js`). */
export interface WebFile {
  name: string;
  gzip: Buffer;
}

/**
 * The built web app of a role, or null when it has not been built. Read from `dist/web/`
 * when running from source (`npm run build` writes it); the build replaces this module
 * with one that embeds the files, so the bundle carries its UI with it.
 */
export function loadWebFiles(role: Role): WebFile[] | null {
  const dir = new URL(`../../../../dist/web/${role}/`, import.meta.url);
  if (!existsSync(dir)) return null;
  return readdirSync(dir)
    .filter((name) => name.endsWith('.gz'))
    .map((name) => ({ name: name.slice(0, -3), gzip: readFileSync(new URL(name, dir)) }));
}
