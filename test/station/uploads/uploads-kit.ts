// What the upload suites share: reply assertions, names, and one Station per suite file with
// the helpers that act on it (mint, store, overview). Each suite runs on PGlite and PostgreSQL
// (see its two runner files).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import type { OverviewScout, OverviewSnapshot } from '../../../src/shared/protocol/overview.ts';
import type { StationTokenView } from '../../../src/shared/protocol/station-tokens.ts';
import type { FinalizeReply } from '../../../src/shared/protocol/uploads.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { adminClient, type Client, parseBody } from '../../helpers/http.ts';
import type { TestServer } from '../../helpers/server.ts';
import { storedBytes } from '../../helpers/station-store.ts';
import { type ArchiveMeta, archiveMeta, finalize, initiate, sendChunks } from '../../helpers/uploads.ts';

/** MAX_UPLOAD_BYTES of the suites' Stations, except the one that checks disk space. */
export const MAX_UPLOAD = 3_000_000;
/** MAX_UPLOAD_BYTES that lets a 500 TB declaration reach the disk-space check. */
export const HUGE_LIMIT = '1000000000000000';
export const STORED_NAME =
  /^[A-Za-z0-9_-][A-Za-z0-9._-]*__\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z__[0-9a-f]{8}(-\d+)?\.tar\.zst$/;

export type StartStation = (name: string, env: Record<string, string>) => Promise<TestServer>;

/** Parsed JSON as the tests read it; its shape is what the assertions check. */
export type Json = ReturnType<typeof JSON.parse>;

export interface AnyReply {
  status: number;
  body: Json;
  text?: string;
}

export const show = (reply: AnyReply) => reply.text ?? JSON.stringify(reply.body);

/** Asserts a success status (200 unless given); a string argument is a message for a 200. */
export function assertOk(reply: AnyReply, statusOrMessage: number | string = 200): void {
  const status = typeof statusOrMessage === 'number' ? statusOrMessage : 200;
  const why = typeof statusOrMessage === 'string' ? `${statusOrMessage}: ` : '';
  assert.equal(reply.status, status, `${why}expected ${status}, got ${reply.status}: ${show(reply)}`);
}

/** A revoked token leaves the list, or stays marked as revoked (either is allowed). */
export function assertGoneOrRevoked(entry: StationTokenView | undefined): void {
  if (entry === undefined) return;
  const marked = entry as StationTokenView & { revoked?: boolean; revoked_at?: string };
  assert.ok(
    marked.revoked === true || typeof marked.revoked_at === 'string',
    `still listed as live: ${JSON.stringify(entry)}`,
  );
}

/** Names unique within the run (test files of both runners may share nothing, but be safe). */
let nameCounter = 0;
export const unique = (prefix: string) => {
  nameCounter += 1;
  return `${prefix}-${nameCounter}`;
};
export const instanceId = () => randomBytes(10).toString('hex');

/** Increasing UTC timestamps `YYYY-MM-DDTHH:MM:SSZ`, one minute apart. */
let tsCounter = 0;
export const nextTimestamp = () => {
  tsCounter += 1;
  return utcSecond(Date.UTC(2026, 10, 1, 0, 0, 0) + tsCounter * 60_000);
};

export const expectedName = (meta: ArchiveMeta) =>
  `${meta.job_name}__${meta.timestamp.replaceAll(':', '-')}__${meta.fingerprint.slice(0, 8)}.tar.zst`;

/** A finalize that stored `data` whole: 200, `stored`, under `meta`'s name, byte for byte. */
export async function assertStoredWhole(
  station: TestServer,
  reply: AnyReply,
  meta: ArchiveMeta,
  at: { scout: string; instance: string; job: string },
  data: Buffer,
): Promise<void> {
  assertOk(reply);
  assert.equal(reply.body.status, 'stored');
  assert.equal(reply.body.stored_as, expectedName(meta));
  const stored = await storedBytes(station, at, reply.body.stored_as);
  assert.ok(stored.equals(data), `${reply.body.stored_as} holds exactly the bytes sent`);
}

export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Every file under `dir`, recursively, relative to it. */
export function filesUnder(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...filesUnder(join(dir, entry.name), rel));
    else out.push(rel);
  }
  return out.sort();
}

export async function rawRequest(
  url: string,
  method: string,
  path: string,
  token: string | undefined,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<AnyReply> {
  const h: Record<string, string> = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  if (body !== undefined) h['content-type'] ??= 'application/json';
  const res = await fetch(`${url}${path}`, { method, headers: h, body });
  const text = await res.text();
  return { status: res.status, body: parseBody(text), text };
}

/** The Station of a suite file (started before its tests, disposed after) and its helpers. */
export function useStation(start: StartStation, name: string, env: Record<string, string>) {
  const ctx = {
    station: undefined as unknown as TestServer,
    admin: undefined as unknown as Client,
    /** How far the tests moved the Station's clock. */
    offset: 0,
    /** Every Station token minted: none may ever appear in a list. */
    credentials: new Set<string>(),
  };
  const now = () => Date.now() + ctx.offset;
  const snapshotsDir = (server: TestServer, scout: string, inst: string, job: string) =>
    join(server.dataDir, 'snapshots', scout, inst, job);

  async function mint(
    client: Client = ctx.admin,
    body: Record<string, unknown> = {},
    query = '',
  ): Promise<{ credential: string; hash: string; body: Json }> {
    const reply = await client.post(`/api/credentials/mint${query}`, body);
    assertOk(reply, 201);
    assert.equal(typeof reply.body.credential, 'string', reply.text);
    ctx.credentials.add(reply.body.credential);
    return { credential: reply.body.credential, hash: sha256(reply.body.credential), body: reply.body };
  }

  async function listEntry(hash: string, client: Client = ctx.admin): Promise<StationTokenView | undefined> {
    const list = await client.get('/api/credentials');
    assertOk(list);
    return (list.body.credentials as StationTokenView[]).find((c) => c.token_hash === hash);
  }

  async function requireEntry(hash: string): Promise<StationTokenView> {
    const entry = await listEntry(hash);
    assert.ok(entry, `token ${hash} is listed`);
    return entry;
  }

  /** Snapshots of one job in GET /api/overview (undefined when the job is not listed). */
  async function overviewJob(
    client: Client,
    scout: string,
    inst: string,
    job: string,
  ): Promise<OverviewSnapshot[] | undefined> {
    const reply = await client.get('/api/overview?section=snapshots');
    assertOk(reply);
    const s = (reply.body.scouts as OverviewScout[]).find((x) => x.scout_id === scout);
    const i = s?.instances.find((x) => x.scout_instance_id === inst);
    return i?.jobs.find((x) => x.job_name === job)?.snapshots;
  }

  /** Initiates, sends everything from next_offset, finalizes; asserts each step. */
  async function store(
    url: string,
    token: string,
    data: Uint8Array,
    meta: ArchiveMeta,
    chunkSize = 128 * 1024,
  ): Promise<FinalizeReply> {
    const started = await initiate(url, token, meta);
    assertOk(started);
    assert.equal(started.body.status, 'receiving', JSON.stringify(started.body));
    await sendChunks(url, token, started.body.upload_id, data, started.body.next_offset, chunkSize, assertOk);
    const done = await finalize(url, token, started.body.upload_id);
    assertOk(done);
    assert.equal(done.body.status, 'stored', JSON.stringify(done.body));
    return done.body;
  }

  function meta(data: Uint8Array, overrides: Partial<ArchiveMeta>): ArchiveMeta {
    return archiveMeta(data, { timestamp: nextTimestamp(), ...overrides });
  }

  /** Initiates an upload of `size` random bytes as `scout`/`inst` with `token`. */
  function initiateAs(token: string, scout: string, inst: string, size = 500) {
    return initiate(
      ctx.station.url,
      token,
      meta(randomBytes(size), { scout_id: scout, scout_instance_id: inst }),
    );
  }

  before(async () => {
    ctx.station = await start(name, env);
    ctx.admin = await adminClient(ctx.station.url);
  });

  after(async () => {
    await ctx.station?.dispose();
  });

  return Object.assign(ctx, {
    now,
    snapshotsDir,
    mint,
    listEntry,
    requireEntry,
    overviewJob,
    store,
    meta,
    initiateAs,
  });
}
