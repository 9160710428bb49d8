// Tools for the route fuzz test: the route table of a role read from its source, and a raw
// HTTP sender that sends paths and bytes exactly as given (hostile inputs: fuzz-inputs.ts).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { API_ROOTS } from '../../src/shared/protocol/api-paths.ts';
import { ROOT } from '../helpers/server.ts';
import type { Body } from './fuzz-inputs.ts';

export interface RouteDef {
  method: string;
  /** Hono path template, e.g. `/api/snapshots/:scoutId/:jobName/:filename`. */
  path: string;
}

/** The path parameters of a template, in order (`*` for a wildcard). */
export function paramsOf(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s.startsWith(':') || s === '*')
    .map((s) => (s === '*' ? '*' : s.slice(1)));
}

function joinPaths(prefix: string, path: string): string {
  const joined = `${prefix.replace(/\/$/, '')}/${path.replace(/^\//, '')}`;
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

/** `{ name: file }` for the named imports of a source file. */
function importsOf(file: string, source: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)) {
    for (const name of (m[1] ?? '').split(',')) {
      const clean = name.replace(/^\s*type\s+/, '').trim();
      if (clean && m[2]?.startsWith('.')) map.set(clean, resolve(dirname(file), m[2]));
    }
  }
  return map;
}

/** Routes a module registers directly on its Hono app (`app.get('/x', …)`). */
function routesIn(file: string): RouteDef[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/\bapp\.(get|post|put|patch|delete)\(\s*'([^']*)'/g)].map((m) => ({
    method: (m[1] ?? '').toUpperCase(),
    path: m[2] ?? '',
  }));
}

/** Routes an app file mounts with `app.route('/prefix', someRoutes(…))`, resolved to their modules. */
function mountedRoutes(file: string): RouteDef[] {
  const source = readFileSync(file, 'utf8');
  const imports = importsOf(file, source);
  const routes: RouteDef[] = [];
  // The prefix is a literal or one of src/shared/protocol/api-paths.ts's API_ROOTS.
  for (const m of source.matchAll(/\bapp\.route\(\s*(?:'([^']*)'|API_ROOTS\.(\w+))\s*,\s*(\w+)\(/g)) {
    const module = imports.get(m[3] ?? '');
    if (!module) throw new Error(`cannot find the module of ${m[3]} mounted in ${file}`);
    const prefix = m[1] ?? API_ROOTS[m[2] as keyof typeof API_ROOTS];
    if (prefix === undefined) throw new Error(`no API_ROOTS.${m[2]} (mounted in ${file})`);
    for (const route of routesIn(module)) {
      routes.push({ method: route.method, path: joinPaths(prefix, route.path) });
    }
  }
  return routes;
}

/**
 * Every route of a role, read from the same source the server runs: the core app's routes
 * and the role's. A route added later is fuzzed without anyone updating a list.
 */
export function discoverRoutes(role: 'station' | 'scout'): RouteDef[] {
  const all = [
    ...routesIn(join(ROOT, `src/${role}/app.ts`)),
    ...mountedRoutes(join(ROOT, 'src/core/http/core-app.ts')),
    ...mountedRoutes(join(ROOT, `src/${role}/app.ts`)),
  ];
  const seen = new Set<string>();
  return all.filter((r) => {
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// Sending

export interface FuzzRequest {
  method: string;
  /** Path and query exactly as sent. */
  path: string;
  headers: Record<string, string>;
  body?: Body;
  /** Which credential, for the report. */
  as: string;
}

export interface FuzzReply {
  /** 0 when no answer came (connection error or timeout). */
  status: number;
  text: string;
  /** Milliseconds from sending to the end of the answer. */
  ms?: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * Sends one request as is (no URL normalisation); resolves with status 0 on no answer. A
 * kept-alive socket the server closed just as we reused it is the client's race, not the
 * server's failure: that request is sent once more on a new socket (as Node's docs advise).
 */
export function send(
  baseUrl: string,
  req: FuzzRequest,
  timeoutMs = 20_000,
  retried = false,
): Promise<FuzzReply> {
  const url = new URL(baseUrl);
  const headers: Record<string, string | number> = { ...req.headers };
  if (req.body?.contentType !== undefined) headers['content-type'] = req.body.contentType;
  if (req.body) headers['content-length'] = req.body.bytes.length;
  return new Promise((done) => {
    let out: ReturnType<typeof request>;
    try {
      out = request({
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers,
        agent,
      });
    } catch (err) {
      done({ status: 0, text: `request not sent: ${(err as Error).message}` });
      return;
    }
    let answered = false;
    out.setTimeout(timeoutMs, () => out.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    out.on('error', (err: NodeJS.ErrnoException) => {
      if (!answered && !retried && out.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        done(send(baseUrl, req, timeoutMs, true));
      } else {
        done({ status: 0, text: err.message });
      }
    });
    out.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        if (size < 4096) chunks.push(d);
        size += d.length;
      });
      res.on('end', () =>
        done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8').slice(0, 400) }),
      );
      res.on('error', (err) => done({ status: 0, text: err.message }));
    });
    out.end(req.body?.bytes);
  });
}

/** Sends `requests` with `concurrency` in flight; calls `between` before every `batch` requests. */
export async function sendAll(
  baseUrl: string,
  requests: FuzzRequest[],
  options: { concurrency: number; batch: number; between: () => void },
): Promise<FuzzReply[]> {
  const replies: FuzzReply[] = new Array(requests.length);
  for (let start = 0; start < requests.length; start += options.batch) {
    options.between();
    let next = start;
    const end = Math.min(requests.length, start + options.batch);
    const worker = async () => {
      while (next < end) {
        const i = next++;
        const started = performance.now();
        const reply = await send(baseUrl, requests[i] as FuzzRequest);
        replies[i] = { ...reply, ms: Math.round(performance.now() - started) };
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  }
  return replies;
}

export function describeRequest(req: FuzzRequest, reply: FuzzReply): string {
  const path = req.path.length > 160 ? `${req.path.slice(0, 140)}…(${req.path.length} chars)` : req.path;
  const body = req.body ? ` [${req.body.contentType ?? 'no content-type'}] ${req.body.label}` : '';
  return `${req.method} ${path} as ${req.as}${body}\n    → ${reply.status} ${reply.text.slice(0, 300)}`;
}
