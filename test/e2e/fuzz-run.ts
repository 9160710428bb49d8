// The machinery of the route fuzz (fuzz-routes*.test.ts): which requests each route and
// credential get, the order they run in (harmless routes mixed first, then the routes that
// delete, pause or end sessions, one at a time), the outcome and its checks, and the Station's
// target (valid values and bodies), shared by the PGlite and the PostgreSQL run.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '../helpers/hashes.ts';
import type { Client } from '../helpers/http.ts';
import { ROOT, type TestServer } from '../helpers/server.ts';
import { archiveMeta } from '../helpers/uploads.ts';
import {
  type Body,
  HOSTILE_HEADERS,
  HOSTILE_QUERY_VALUES,
  HOSTILE_RANGES,
  HOSTILE_SEGMENTS,
  hostileBodies,
  MUST_SEGMENTS,
  type Rng,
  seeded,
} from './fuzz-inputs.ts';
import {
  describeRequest,
  discoverRoutes,
  type FuzzReply,
  type FuzzRequest,
  paramsOf,
  type RouteDef,
  sendAll,
} from './fuzz-kit.ts';

export const SEED = 13_10;
const CONCURRENCY = 8;
/** Requests between two clock moves: below the 1,200 per minute `/api` limit. */
const BATCH = 1000;

/**
 * Routes whose every accepted request costs real work (a password hash, a verification pass,
 * a walk of the scan root): fuzzed with fewer variants to keep the test within seconds.
 */
const SLOW_ROUTES = /\/(login|change-password|verify|save-job|exclude|decision)$|^\/api\/users/;

/** Routes that send snapshot bytes (and read `Range`). */
const DOWNLOADS = /^GET \/(api\/snapshots|backup\/recovery)\/.*\/(:filename|latest|by-fingerprint|archive)$/;

export type Depth = 'full' | 'medium' | 'light';
export interface Credential {
  name: string;
  headers: (rng: Rng) => Record<string, string>;
}

/** What a role's routes need to get past their first checks. */
export interface Target {
  server: TestServer;
  routes: RouteDef[];
  /** A value that exists (or at least is well formed) for a path parameter of a route. */
  valid: (route: RouteDef, param: string) => string;
  /** Query and JSON body that a route accepts, by `METHOD path`. */
  query: Record<string, string>;
  body: Record<string, Record<string, unknown> | Body>;
  /** Query keys a route reads, by `METHOD path`. */
  queryKeys: Record<string, string[]>;
  credentials: (route: RouteDef) => Array<[Credential, Depth]>;
}

/** A file of the role's built web UI (the fuzz needs the UI built: `npm test` builds it first). */
/** Valid bodies of the routes both roles share (the core's); each role adds its own. */
export const CORE_BODIES: Record<string, unknown> = {
  'POST /api/session/login': { username: 'nobody', password: 'wrong-password' },
  'POST /api/session/change-password': {
    current_password: 'wrong-password',
    new_password: 'new-password-1',
    confirm_new_password: 'new-password-1',
  },
  'POST /api/users': { username: 'fuzz-new', password: 'password-123', is_admin: false },
  'PUT /api/users/:userId': { username: 'fuzz-renamed' },
  'POST /api/automation-tokens': { name: 'fuzz', scopes: ['read'], ttl_days: 1 },
  'POST /api/ntfy': { ntfy_url: 'http://127.0.0.1:9', ntfy_topic: 'fuzz', ntfy_message_template: 'x' },
  'POST /api/ntfy/test': {
    ntfy_url: 'http://127.0.0.1:9',
    ntfy_topic: 'fuzz',
    ntfy_message_template: 'x',
  },
};

export function assetName(role: 'station' | 'scout'): string {
  const dir = join(ROOT, 'dist/web', role);
  assert.ok(existsSync(dir), `${dir} is missing: run \`node scripts/build.ts\` first (npm test does)`);
  const file = readdirSync(dir).find((name) => name.endsWith('.js.gz'));
  assert.ok(file, `no script in ${dir}`);
  return file.slice(0, -'.gz'.length);
}

const key = (r: RouteDef) => `${r.method} ${r.path}`;

/**
 * Routes that end a session, change who may sign in, delete, pause or reset settings run
 * last, one route at a time, in this order; the others run first, all mixed.
 */
function finalRank(r: RouteDef): number | null {
  if (r.method === 'DELETE') return 1;
  if (r.method === 'POST' && /\/settings$/.test(r.path)) return 2;
  if (/\/(delete-job|rotate|cancel-operation)$/.test(r.path)) return 3;
  if (/\/pause$/.test(r.path)) return 4;
  if (/\/resume$/.test(r.path)) return 5;
  if (/\/session\/login$/.test(r.path)) return 6;
  if (/\/session\/change-password$/.test(r.path)) return 7;
  if (/\/session\/logout-all$/.test(r.path)) return 8;
  if (/\/session\/logout$/.test(r.path)) return 9;
  return null;
}

const GARBAGE_AUTH = [
  'Bearer',
  'Bearer %00',
  `Bearer ${'x'.repeat(3000)}`,
  'Basic YWRtaW46YWRtaW4=',
  'Bearer a b',
  'Bearer \u00ff\u00fe',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  'Bearer eyJhbGciOiJFZERTQSJ9.%00.%00',
  `Bearer bkd_${'0'.repeat(64)}`,
];

export function garbageCredential(cookieName: string): Credential {
  const cookies = [
    `${cookieName}=%00`,
    `${cookieName}=${'x'.repeat(3000)}`,
    `${cookieName}=\u00ff`,
    `${cookieName}=; ${cookieName}=a`,
    `${cookieName}="unterminated`,
  ];
  return {
    name: 'garbage credentials',
    headers: (rng): Record<string, string> =>
      rng.next() < 0.5 ? { authorization: rng.pick(GARBAGE_AUTH) } : { cookie: rng.pick(cookies) },
  };
}

function pathWith(route: RouteDef, values: Record<string, string>): string {
  return route.path
    .split('/')
    .map((s) => (s === '*' ? (values['*'] ?? 'x') : s.startsWith(':') ? (values[s.slice(1)] ?? 'x') : s))
    .join('/');
}

const isJsonBody = (b: Record<string, unknown> | Body | undefined): b is Record<string, unknown> =>
  b !== undefined && !Buffer.isBuffer((b as Body).bytes);

/** The requests for one route and credential, `depth` deciding how many. */
function requestsFor(
  target: Target,
  route: RouteDef,
  cred: Credential,
  depth: Depth,
  rng: Rng,
): FuzzRequest[] {
  const params = paramsOf(route.path);
  const validValues = Object.fromEntries(params.map((p) => [p, target.valid(route, p)]));
  const baseQuery = target.query[key(route)];
  const baseBodyDef = target.body[key(route)];
  const hasBody = route.method !== 'GET';
  const baseBody: Body | undefined = !hasBody
    ? undefined
    : baseBodyDef === undefined
      ? undefined
      : isJsonBody(baseBodyDef)
        ? {
            contentType: 'application/json',
            bytes: Buffer.from(JSON.stringify(baseBodyDef)),
            label: 'valid body',
          }
        : baseBodyDef;
  const make = (over: {
    values?: Record<string, string>;
    query?: string;
    body?: Body | null;
    method?: string;
    headers?: Record<string, string>;
  }) => {
    const query = over.query ?? baseQuery;
    const body = over.body === null ? undefined : (over.body ?? baseBody);
    return {
      method: over.method ?? route.method,
      path: `${pathWith(route, { ...validValues, ...over.values })}${query !== undefined ? `?${query}` : ''}`,
      headers: { ...cred.headers(rng), ...over.headers },
      ...(body ? { body } : {}),
      as: cred.name,
    } satisfies FuzzRequest;
  };

  const counts = {
    full: { segments: 8, query: 6, bodies: 20, methods: true },
    medium: { segments: MUST_SEGMENTS, query: 2, bodies: 6, methods: false },
    light: { segments: 1, query: 1, bodies: 2, methods: false },
  }[depth];
  const out: FuzzRequest[] = [make({})];
  for (const p of params) {
    const segments = [
      ...HOSTILE_SEGMENTS.slice(0, Math.min(counts.segments, MUST_SEGMENTS)),
      ...rng.sample(HOSTILE_SEGMENTS.slice(MUST_SEGMENTS), Math.max(0, counts.segments - MUST_SEGMENTS)),
    ];
    if (depth !== 'light') segments.push(`${validValues[p]}%00`, `${validValues[p]}%FF`);
    for (const s of segments) out.push(make({ values: { [p]: s } }));
  }
  const keys = [
    ...(target.queryKeys[key(route)] ?? []),
    'x%00',
    rng.pick(['offset', 'fp', 'relative_path', 'section']),
  ];
  for (let i = 0; i < counts.query; i++) {
    const k = keys[i % keys.length] ?? 'q';
    const hostile = `${k}=${rng.pick(HOSTILE_QUERY_VALUES)}`;
    const others = (baseQuery ?? '').split('&').filter((kv) => kv && !kv.startsWith(`${k}=`));
    out.push(make({ query: [...others, hostile, i % 4 === 3 ? hostile : ''].filter(Boolean).join('&') }));
  }
  if (hasBody) {
    const base = isJsonBody(baseBodyDef) ? baseBodyDef : undefined;
    for (const body of hostileBodies(rng, base, counts.bodies)) out.push(make({ body }));
    out.push(make({ body: null }));
  }
  if (counts.methods) {
    for (const method of ['PATCH', 'OPTIONS', 'HEAD']) out.push(make({ method, body: null }));
    for (const headers of rng.sample(HOSTILE_HEADERS, 3)) out.push(make({ headers }));
    if (DOWNLOADS.test(`${route.method} ${route.path}`)) {
      for (const range of HOSTILE_RANGES) out.push(make({ headers: { range } }));
    }
  }
  return out;
}

interface Outcome {
  sent: number;
  offenders: string[];
  unrouted: string[];
  byStatus: Map<number, number>;
  /** `METHOD path-template` → how many of its answers were ≥ 500. */
  offendingRoutes: Map<string, number>;
  /** `METHOD path-template` → milliseconds its requests took, summed. */
  msByRoute: Map<string, number>;
}

/** Fuzzes every route of `target`: the harmless ones all mixed, then the final ones in order. */
export async function fuzz(target: Target, seed: number): Promise<Outcome> {
  const rng = seeded(seed);
  const main: FuzzRequest[] = [];
  const baselines = new Set<FuzzRequest>();
  const routeOf = new Map<FuzzRequest, string>();
  const finals: Array<[number, FuzzRequest[]]> = [];
  for (const route of target.routes) {
    const reqs: FuzzRequest[] = [];
    for (const [cred, wanted] of target.credentials(route)) {
      const slow = SLOW_ROUTES.test(route.path);
      const depth = slow && wanted === 'full' ? 'medium' : slow && wanted === 'medium' ? 'light' : wanted;
      const some = requestsFor(target, route, cred, depth, rng);
      if (depth === 'full') baselines.add(some[0] as FuzzRequest);
      for (const req of some) routeOf.set(req, key(route));
      reqs.push(...some);
    }
    const rank = finalRank(route);
    if (rank === null) main.push(...reqs);
    else finals.push([rank, reqs]);
  }
  const shuffled = rng.sample(main, main.length);
  const ordered = [shuffled, ...finals.sort((a, b) => a[0] - b[0]).map(([, reqs]) => reqs)];
  const outcome: Outcome = {
    sent: 0,
    offenders: [],
    unrouted: [],
    byStatus: new Map(),
    offendingRoutes: new Map(),
    msByRoute: new Map(),
  };
  for (const group of ordered) {
    const replies = await sendAll(target.server.url, group, {
      concurrency: CONCURRENCY,
      batch: BATCH,
      between: () => target.server.advanceClock(61_000),
    });
    group.forEach((req, i) => {
      const reply = replies[i] as FuzzReply;
      outcome.sent += 1;
      outcome.byStatus.set(reply.status, (outcome.byStatus.get(reply.status) ?? 0) + 1);
      const route = routeOf.get(req) ?? '?';
      outcome.msByRoute.set(route, (outcome.msByRoute.get(route) ?? 0) + (reply.ms ?? 0));
      if (reply.status === 0 || reply.status >= 500) {
        outcome.offenders.push(describeRequest(req, reply));
        outcome.offendingRoutes.set(route, (outcome.offendingRoutes.get(route) ?? 0) + 1);
      }
      if (baselines.has(req) && reply.status === 404 && reply.text.includes('no route for')) {
        outcome.unrouted.push(describeRequest(req, reply));
      }
    });
  }
  return outcome;
}

export function summary(role: string, outcome: Outcome, ms: number): void {
  const statuses = [...outcome.byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`);
  const slowest = [...outcome.msByRoute]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([route, total]) => `${route} ${total} ms`);
  process.stdout.write(`# ${role}: ${outcome.sent} requests in ${ms} ms (${statuses.join(' ')})\n`);
  process.stdout.write(`# ${role}: slowest routes (request time summed): ${slowest.join('; ')}\n`);
}

export function assertClean(outcome: Outcome): void {
  const routes = [...outcome.offendingRoutes].map(([route, n]) => `${route} ×${n}`).join('\n  ');
  assert.equal(
    outcome.offenders.length,
    0,
    `${outcome.offenders.length} answers ≥ 500, by route:\n  ${routes}\nthe first 20:\n${outcome.offenders.slice(0, 20).join('\n')}`,
  );
  assert.deepEqual(outcome.unrouted, [], 'every discovered route answers its valid request');
}

/** The server still answers: health, and an automation token (which no fuzz revoked) still works. */
export async function assertHealthy(server: TestServer, token: string): Promise<void> {
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200, await health.text());
  const me = await fetch(`${server.url}/api/session/me`, { headers: { authorization: `Bearer ${token}` } });
  const text = await me.text();
  assert.equal(me.status, 200, text);
  assert.equal(JSON.parse(text).authenticated, true);
}

/** A second account, a throwaway automation token and a hook file: things the fuzz may delete. */
export async function victims(admin: Client): Promise<{ userId: string; tokenId: string }> {
  const user = await admin.post('/api/users', {
    username: 'fuzz-other',
    password: 'password-123',
    is_admin: false,
  });
  assert.equal(user.status, 201, user.text);
  const token = await admin.post('/api/automation-tokens', { name: 'throwaway', scopes: ['read'] });
  assert.equal(token.status, 201, token.text);
  const hook = await admin.upload('/api/hooks/files', 'hook_file', 'fuzz.sh', '#!/bin/sh\nexit 0\n');
  assert.equal(hook.status, 201, hook.text);
  return { userId: String(user.body.user.id), tokenId: String(token.body.automation_token.id) };
}

export const sessionHeaders = (client: Client) => () => ({ cookie: client.cookieHeader() });
export const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });

/** What a Station run knows: its server, credentials and things that exist on it. */
export interface StationFacts {
  server: TestServer;
  admin: Client;
  automationToken: string;
  /** The Station token bound to `fuzz-host`/`instanceId`; the final phase revokes it. */
  credential: string;
  /** Another Station token, whose hash the final phase revokes. */
  spareCredential: string;
  instanceId: string;
  /** A stored snapshot of `fuzz-host`/`instanceId`/`documents`. */
  filename: string;
  requestId: string;
  /** An upload of `credential` that waits for its bytes. */
  uploadId: string;
  victims: { userId: string; tokenId: string };
}

/** The Station's routes with the values and bodies that get past their first checks. */
export function stationTarget(facts: StationFacts): Target {
  const admin: Credential = { name: 'admin session', headers: sessionHeaders(facts.admin) };
  const auto: Credential = { name: 'automation token', headers: bearer(facts.automationToken) };
  const stationToken: Credential = { name: 'Station token', headers: bearer(facts.credential) };
  const none: Credential = { name: 'no credentials', headers: () => ({}) };
  const garbage = garbageCredential('service_session');
  const valid: Record<string, string> = {
    scoutId: 'fuzz-host',
    instanceId: facts.instanceId,
    jobName: 'documents',
    requestId: facts.requestId,
    uploadId: facts.uploadId,
    tokenHash: sha256(facts.spareCredential),
    '*': 'scouts/fuzz-host',
    name: assetName('station'),
  };
  return {
    server: facts.server,
    routes: discoverRoutes('station'),
    valid: (route, param) => {
      if (param === 'userId') return facts.victims.userId;
      if (param === 'tokenId') return facts.victims.tokenId;
      if (param === 'filename') {
        if (route.path.includes('/hooks/')) return 'fuzz.sh';
        if (route.path.includes('/certificates/')) return 'fuzz.pem';
        return facts.filename;
      }
      return valid[param] ?? 'x';
    },
    query: {
      'PUT /backup/uploads/:uploadId/chunk': 'offset=0',
      'GET /backup/recovery/:scoutId/:instanceId/:jobName/by-fingerprint': `fp=${facts.filename.split('__')[2]?.slice(0, 8) ?? 'deadbeef'}`,
    },
    queryKeys: {
      'PUT /backup/uploads/:uploadId/chunk': ['offset'],
      'GET /backup/recovery/:scoutId/:instanceId/:jobName/by-fingerprint': ['fp'],
      'GET /api/overview': ['section'],
      'DELETE /api/instances/:scoutId/:instanceId': ['cleanup_missing'],
      'POST /api/credentials/mint': ['ttl_days'],
    },
    body: {
      ...CORE_BODIES,
      'POST /api/settings': { retention_keep_last: 5 },
      'POST /api/hooks': { pre_command: '', post_command: '' },
      'POST /api/credentials/mint': { ttl_days: 30 },
      'POST /api/snapshots/:scoutId/:instanceId/:jobName/:filename/restore': {},
      'POST /backup/uploads/initiate': {
        ...archiveMeta(Buffer.from('fuzz'), {
          scout_id: 'fuzz-host',
          scout_instance_id: facts.instanceId,
          job_name: 'documents',
        }),
      },
      'PUT /backup/uploads/:uploadId/chunk': {
        contentType: 'application/octet-stream',
        bytes: randomBytes(16),
        label: '16 bytes',
      },
      'POST /backup/recovery/:scoutId/:instanceId/requests/:requestId': { status: 'accepted' },
      'POST /backup/drills/:scoutId/:instanceId/:jobName': {
        filename: facts.filename,
        status: 'ok',
        files: 1,
        bytes: 5,
        error: null,
        finished_at: '2026-01-01T00:00:00Z',
      },
    },
    credentials: (route) => {
      if (route.path.startsWith('/api/')) {
        return [
          [admin, 'full'],
          [auto, 'medium'],
          [none, 'light'],
          [garbage, 'light'],
          [stationToken, 'light'],
        ];
      }
      if (route.path.startsWith('/backup/')) {
        return [
          [stationToken, 'full'],
          [none, 'light'],
          [garbage, 'light'],
          [admin, 'light'],
          [auto, 'light'],
        ];
      }
      return [
        [none, 'full'],
        [garbage, 'light'],
      ];
    },
  };
}
