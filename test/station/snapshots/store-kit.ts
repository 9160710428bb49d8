// What the stored-snapshot suites share: one Station per suite file with a read and a restore
// automation token, uploads through the Scout protocol, downloads and overview helpers.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { ErrorBody } from '../../../src/shared/protocol/error-codes.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import type {
  OverviewInstance,
  OverviewScout,
  OverviewSnapshot,
} from '../../../src/shared/protocol/overview.ts';
import type { VerifyFailure } from '../../../src/shared/protocol/snapshots.ts';
import { adminClient, type Client, mintAutomationToken, type Reply } from '../../helpers/http.ts';
import type { TestServer } from '../../helpers/server.ts';
import { type ArchiveMeta, archiveMeta, upload } from '../../helpers/uploads.ts';

export type StartStation = () => Promise<TestServer>;

export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The body parsed as JSON when it is JSON (errors), else null. */
  json: ErrorJson | null;
}

/** A download's body when it is JSON (an error answer). */
export type ErrorJson = Partial<ErrorBody>;

export interface Stored {
  data: Buffer;
  meta: ArchiveMeta;
  name: string;
}

export const hex64 = () => randomBytes(32).toString('hex');

/** Archive timestamps that only move forward, so a later upload always has a later name. */
let tick = 0;
export function nextTimestamp(): string {
  tick += 1;
  return utcSecond(Date.UTC(2026, 0, 1) + tick * 61_000);
}

export function assertIso(value: unknown, what: string): number {
  assert.equal(typeof value, 'string', `${what} is an ISO timestamp: ${JSON.stringify(value)}`);
  const ms = Date.parse(value as string);
  assert.ok(Number.isFinite(ms), `${what} parses: ${value}`);
  return ms;
}

/** The Station of a suite file (started before its tests, disposed after) and its helpers. */
export function useStoreStation(start: StartStation) {
  const ctx = {
    station: undefined as unknown as TestServer,
    admin: undefined as unknown as Client,
    readToken: '',
    restoreToken: '',
  };

  before(async () => {
    ctx.station = await start();
    ctx.admin = await adminClient(ctx.station.url);
    [ctx.readToken, ctx.restoreToken] = await Promise.all([
      mintAutomationToken(ctx.admin, ['read']),
      mintAutomationToken(ctx.admin, ['restore']),
    ]);
  });

  after(async () => {
    await ctx.station?.dispose();
  });

  const root = () => join(ctx.station.dataDir, 'snapshots');
  const fileOf = (scout: string, instance: string, job: string, name: string) =>
    join(root(), scout, instance, job, name);
  async function mintStation(): Promise<string> {
    const reply = await ctx.admin.post('/api/credentials/mint', {});
    assert.ok(reply.status === 200 || reply.status === 201, `mint: ${reply.status} ${reply.text}`);
    assert.equal(typeof reply.body.credential, 'string');
    return reply.body.credential;
  }

  /** Uploads `size` random bytes through the Scout protocol and returns what was stored. */
  async function store(
    token: string,
    at: { scout: string; instance: string; job: string },
    options: { size?: number; fingerprint?: string; extra?: Partial<ArchiveMeta> } = {},
  ): Promise<Stored> {
    const data = randomBytes(options.size ?? 2000 + Math.floor(Math.random() * 2000));
    const meta = archiveMeta(data, {
      scout_id: at.scout,
      scout_instance_id: at.instance,
      job_name: at.job,
      timestamp: nextTimestamp(),
      ...(options.fingerprint ? { fingerprint: options.fingerprint } : {}),
      ...options.extra,
    });
    const result = await upload(ctx.station.url, token, data, meta);
    assert.equal(result.initiate.status, 200, JSON.stringify(result.initiate.body));
    assert.ok(result.finalize, `the upload was finalized: ${JSON.stringify(result.initiate.body)}`);
    assert.equal(result.finalize.status, 200, JSON.stringify(result.finalize.body));
    assert.equal(result.finalize.body.status, 'stored');
    const name: string = result.finalize.body.stored_as;
    assert.match(name, /\.tar\.zst$/);
    return { data, meta, name };
  }

  async function get(path: string, headers: Record<string, string> = {}): Promise<Download> {
    const res = await fetch(`${ctx.station.url}${path}`, { headers });
    const bytes = Buffer.from(await res.arrayBuffer());
    let json: ErrorJson | null = null;
    if ((res.headers.get('content-type') ?? '').includes('json')) {
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        json = null;
      }
    }
    return { status: res.status, headers: res.headers, bytes, json };
  }

  const bearer = (token: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${token}`,
    ...extra,
  });
  const session = (extra: Record<string, string> = {}) => ({ cookie: ctx.admin.cookieHeader(), ...extra });

  /** A GET with the request target sent exactly as written (fetch would resolve `..`). */
  function rawGet(path: string, headers: Record<string, string>): Promise<Download> {
    const url = new URL(ctx.station.url);
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          let json: ErrorJson | null = null;
          try {
            json = JSON.parse(bytes.toString('utf8'));
          } catch {
            json = null;
          }
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, bytes, json });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  function assertSnapshotDownload(reply: Download, expected: { data: Buffer; name: string }) {
    assert.equal(
      reply.status,
      200,
      `expected 200, got ${reply.status}: ${reply.bytes.toString('utf8', 0, 300)}`,
    );
    assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
    assert.equal(reply.headers.get('x-relay-snapshot-filename'), expected.name);
    assert.equal(reply.headers.get('content-length'), String(expected.data.length));
    assert.equal(reply.bytes.length, expected.data.length, 'downloaded size');
    assert.ok(reply.bytes.equals(expected.data), 'downloaded bytes are the stored bytes');
  }

  async function overview(query = ''): Promise<Reply> {
    const reply = await ctx.admin.get(`/api/overview${query}`);
    assert.equal(reply.status, 200, reply.text);
    return reply;
  }

  async function instanceIn(scout: string, instance: string): Promise<OverviewInstance | undefined> {
    const scouts: OverviewScout[] = (await overview('?section=snapshots')).body.scouts;
    return scouts.find((s) => s.scout_id === scout)?.instances.find((i) => i.scout_instance_id === instance);
  }

  async function snapshotsOf(scout: string, instance: string, job: string): Promise<OverviewSnapshot[]> {
    const inst = await instanceIn(scout, instance);
    return inst?.jobs.find((j) => j.job_name === job)?.snapshots ?? [];
  }

  async function verify(): Promise<Reply> {
    const reply = await ctx.admin.post('/api/admin/verify');
    assert.equal(reply.status, 200, reply.text);
    return reply;
  }

  const failuresOf = (result: { failures: VerifyFailure[] }, filename: string) =>
    result.failures.filter((f) => f.filename === filename);

  return Object.assign(ctx, {
    root,
    fileOf,
    mintStation,
    store,
    get,
    bearer,
    session,
    rawGet,
    assertSnapshotDownload,
    overview,
    instanceIn,
    snapshotsOf,
    verify,
    failuresOf,
  });
}
