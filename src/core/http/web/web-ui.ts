import { gunzipSync } from 'node:zlib';
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Role } from '../../config.ts';
import type { AppEnv } from '../app-env.ts';
import { loadWebFiles, type WebFile } from './web-files.ts';

/** What the browser may load: only this origin, no inline script, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  map: 'application/json',
};

/** Paths that belong to the APIs (and `/metrics`): an unknown one stays a JSON 404, never the app. */
const API_PREFIXES = ['/api/', '/backup/', '/metrics/'];
const isApiPath = (path: string) =>
  path === '/api' || path === '/metrics' || API_PREFIXES.some((prefix) => path.startsWith(prefix));

const NOT_BUILT_HTML =
  '<!doctype html><title>backupd</title><p>The web UI has not been built. Run <code>npm run build</code> and restart.</p>';

function contentType(name: string): string {
  return CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}

function acceptsGzip(c: Context): boolean {
  return /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
}

function send(c: Context<AppEnv>, file: WebFile, cacheControl: string): Response {
  c.header('Content-Type', contentType(file.name));
  c.header('Cache-Control', cacheControl);
  c.header('Vary', 'Accept-Encoding');
  c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  c.header('X-Frame-Options', 'DENY');
  c.header('Referrer-Policy', 'no-referrer');
  if (acceptsGzip(c)) {
    c.header('Content-Encoding', 'gzip');
    return c.body(new Uint8Array(file.gzip));
  }
  return c.body(new Uint8Array(gunzipSync(file.gzip)));
}

/**
 * Serves a role's web app: hashed assets under `/assets/` with a year-long immutable
 * cache, and `index.html` (never cached) for every other non-API GET, so client-side
 * routes load the app.
 */
export function webUiRoutes(role: Role): Hono<AppEnv> {
  const files = loadWebFiles(role);
  const byName = new Map((files ?? []).map((file) => [file.name, file]));
  const index = byName.get('index.html');
  const app = new Hono<AppEnv>();
  app.get('/assets/:name', (c) => {
    const file = byName.get(c.req.param('name'));
    if (!file || file.name === 'index.html') return c.notFound();
    return send(c, file, 'public, max-age=31536000, immutable');
  });
  app.get('*', (c) => {
    if (isApiPath(c.req.path)) return c.notFound();
    if (!index) {
      c.header('Cache-Control', 'no-cache');
      return c.html(NOT_BUILT_HTML, 503);
    }
    return send(c, index, 'no-cache');
  });
  return app;
}
