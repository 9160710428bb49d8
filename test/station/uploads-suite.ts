// Station tokens and the Scout upload protocol (spec: station.md, sections Station token, Upload
// session, Upload acceptance, Station tokens routes, Scout upload protocol rules 1-7, Errors,
// Limits; CONTRACT.md: namespace rule, snapshot file names, storage layout, upload statuses and
// checksum_mismatch). Runs on PGlite and on PostgreSQL (see the two runner files).
//
// Two Stations per file, shared by the tests, which run in order:
// - `main` with MAX_UPLOAD_BYTES=3000000: tokens, binding, validation, the upload flow,
//   checksum mismatch, limits, unusual snapshots and retention;
// - `aux` with MAX_UPLOAD_BYTES=10^15 (so a 500 TB declaration reaches the disk-space check):
//   507, unusable storage, SIGKILL mid-upload with restart, abandoned uploads.
// Every test uses its own scout_id / instance / job names. The clock only moves forward.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectIsoNear } from '../helpers/assertions.ts';
import { adminClient, Client, parseBody } from '../helpers/http.ts';
import type { TestServer } from '../helpers/server.ts';
import {
  type ArchiveMeta,
  archiveMeta,
  call,
  finalize,
  initiate,
  putChunk,
  sendChunks,
  sha256,
} from '../helpers/uploads.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const MAX_UPLOAD = 3_000_000;
const HUGE_LIMIT = '1000000000000000';
const STORED_NAME =
  /^[A-Za-z0-9_-][A-Za-z0-9._-]*__\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z__[0-9a-f]{8}(-\d+)?\.tar\.zst$/;

export type StartStation = (name: 'main' | 'aux', env: Record<string, string>) => Promise<TestServer>;

/** Parsed JSON as the tests read it; its shape is what the assertions check. */
type Json = ReturnType<typeof JSON.parse>;

interface AnyReply {
  status: number;
  body: Json;
  text?: string;
}

interface CredentialEntry {
  token_hash: string;
  created_at: string;
  expires_at: string;
  shared: boolean;
  max_registrations: number;
  registrations?: Array<{ scout_id: string; scout_instance_id: string }>;
  revoked?: boolean;
  revoked_at?: string;
  credential?: unknown;
}

interface SnapshotEntry {
  name: string;
  size_bytes: number;
  mtime: string;
  unusual?: boolean;
  unusual_reason?: string;
}

interface OverviewScout {
  scout_id: string;
  instances: Array<{
    scout_instance_id: string;
    jobs: Array<{ job_name: string; snapshots: SnapshotEntry[] }>;
  }>;
}

interface Finalized {
  status: string;
  stored_as: string;
  pruned: string[];
  duplicate: boolean;
  unusual?: boolean;
  unusual_reason?: string;
}

const show = (reply: AnyReply) => reply.text ?? JSON.stringify(reply.body);

/** Asserts an error reply: the status and a `detail` (string or object) that matches `about`. */
function assertError(reply: AnyReply, status: number, about?: RegExp): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${show(reply)}`);
  assert.ok(reply.body && typeof reply.body === 'object', `error body is JSON: ${show(reply)}`);
  const detail = reply.body.detail;
  assert.ok(detail !== undefined && detail !== null && detail !== '', `error has a detail: ${show(reply)}`);
  const text = typeof detail === 'string' ? detail : JSON.stringify(detail);
  if (about) assert.match(text, about, `detail ${text} should match ${about}`);
}

/** Asserts a success status (200 unless given); a string argument is a message for a 200. */
function assertOk(reply: AnyReply, statusOrMessage: number | string = 200): void {
  const status = typeof statusOrMessage === 'number' ? statusOrMessage : 200;
  const why = typeof statusOrMessage === 'string' ? `${statusOrMessage}: ` : '';
  assert.equal(reply.status, status, `${why}expected ${status}, got ${reply.status}: ${show(reply)}`);
}

/** A revoked token leaves the list, or stays marked as revoked (the spec leaves that open). */
function assertGoneOrRevoked(entry: CredentialEntry | undefined): void {
  if (entry === undefined) return;
  assert.ok(
    entry.revoked === true || typeof entry.revoked_at === 'string',
    `still listed as live: ${JSON.stringify(entry)}`,
  );
}

const sha256Text = (text: string) => createHash('sha256').update(text).digest('hex');

/** Names unique within the run (test files of both runners may share nothing, but be safe). */
let nameCounter = 0;
const unique = (prefix: string) => {
  nameCounter += 1;
  return `${prefix}-${nameCounter}`;
};
const instanceId = () => randomBytes(10).toString('hex');

/** Increasing UTC timestamps `YYYY-MM-DDTHH:MM:SSZ`, one minute apart. */
let tsCounter = 0;
const nextTimestamp = () => {
  tsCounter += 1;
  return new Date(Date.UTC(2026, 10, 1, 0, 0, 0) + tsCounter * 60_000).toISOString().replace('.000Z', 'Z');
};

const expectedName = (meta: ArchiveMeta) =>
  `${meta.job_name}__${meta.timestamp.replaceAll(':', '-')}__${meta.fingerprint.slice(0, 8)}.tar.zst`;

function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Every file under `dir`, recursively, relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
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

async function rawRequest(
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

export function uploadsSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let main: TestServer;
    let aux: TestServer;
    let admin: Client;
    let auxAdmin: Client;
    /** How far the tests moved each server's clock. */
    const offsets = { main: 0, aux: 0 };
    /** Every Station token minted: none may ever appear in a list. */
    const credentials = new Set<string>();

    const mainNow = () => Date.now() + offsets.main;
    const snapshotsDir = (server: TestServer, scout: string, inst: string, job: string) =>
      join(server.dataDir, 'snapshots', scout, inst, job);

    async function mint(
      client: Client = admin,
      body: Record<string, unknown> = {},
      query = '',
    ): Promise<{ credential: string; hash: string; body: Json }> {
      const reply = await client.post(`/api/credentials/mint${query}`, body);
      assertOk(reply, 201);
      assert.equal(typeof reply.body.credential, 'string', reply.text);
      credentials.add(reply.body.credential);
      return { credential: reply.body.credential, hash: sha256Text(reply.body.credential), body: reply.body };
    }

    async function listEntry(hash: string, client: Client = admin): Promise<CredentialEntry | undefined> {
      const list = await client.get('/api/credentials');
      assertOk(list);
      return (list.body.credentials as CredentialEntry[]).find((c) => c.token_hash === hash);
    }

    async function requireEntry(hash: string): Promise<CredentialEntry> {
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
    ): Promise<SnapshotEntry[] | undefined> {
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
    ): Promise<Finalized> {
      const started = await initiate(url, token, meta);
      assertOk(started);
      assert.equal(started.body.status, 'receiving', JSON.stringify(started.body));
      await sendChunks(
        url,
        token,
        started.body.upload_id,
        data,
        started.body.next_offset,
        chunkSize,
        assertOk,
      );
      const done = await finalize(url, token, started.body.upload_id);
      assertOk(done);
      assert.equal(done.body.status, 'stored', JSON.stringify(done.body));
      return done.body;
    }

    function meta(data: Uint8Array, overrides: Partial<ArchiveMeta>): ArchiveMeta {
      return archiveMeta(data, { timestamp: nextTimestamp(), ...overrides });
    }

    /** Initiates an upload of `size` random bytes on `main` as `scout`/`inst` with `token`. */
    function initiateAs(token: string, scout: string, inst: string, size = 500) {
      return initiate(main.url, token, meta(randomBytes(size), { scout_id: scout, scout_instance_id: inst }));
    }

    before(async () => {
      [main, aux] = await Promise.all([
        start('main', { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) }),
        start('aux', { MAX_UPLOAD_BYTES: HUGE_LIMIT }),
      ]);
      [admin, auxAdmin] = await Promise.all([adminClient(main.url), adminClient(aux.url)]);
    });

    after(async () => {
      await Promise.all([main?.dispose(), aux?.dispose()]);
    });

    // ------------------------------------------------------------------ Station tokens

    describe('Station tokens', () => {
      test('mint: 201 with credential, ttl_days 365 by default, shared, max_registrations, message', async () => {
        const minted = await mint(admin, {});
        const { body } = minted;
        assert.equal(body.ttl_days, 365);
        assert.equal(body.shared, false);
        assert.ok('max_registrations' in body, `max_registrations in ${JSON.stringify(body)}`);
        assert.equal(typeof body.message, 'string');
        assert.ok(body.message.length > 0);
        assert.ok(body.credential.length >= 20, 'credential is a long secret');

        const entry = await listEntry(minted.hash);
        assert.ok(entry, 'the list has an entry whose token_hash is the SHA-256 hex of the credential');
        expectIsoNear(entry.created_at, mainNow(), 5 * 60_000, 'created_at');
        expectIsoNear(entry.expires_at, mainNow() + 365 * DAY_MS, 5 * 60_000, 'expires_at');
        assert.equal(entry.shared, false);

        // No body at all behaves like {}.
        const bare = await admin.request('POST', '/api/credentials/mint');
        assertOk(bare, 201);
        credentials.add(bare.body.credential);
        assert.equal(bare.body.ttl_days, 365);
      });

      test('mint ttl_days: a nonzero JSON value wins over the query, else the query; range 1 to 3650', async () => {
        const cases: Array<{ query: string; body: Record<string, unknown> | undefined; ttl: number }> = [
          { query: '?ttl_days=10', body: { ttl_days: 20 }, ttl: 20 },
          { query: '?ttl_days=10', body: { ttl_days: 0 }, ttl: 10 },
          { query: '?ttl_days=10', body: {}, ttl: 10 },
          { query: '?ttl_days=11', body: undefined, ttl: 11 },
          { query: '', body: { ttl_days: 1 }, ttl: 1 },
          { query: '', body: { ttl_days: 3650 }, ttl: 3650 },
          { query: '?ttl_days=3650', body: {}, ttl: 3650 },
        ];
        for (const c of cases) {
          const reply = await admin.post(`/api/credentials/mint${c.query}`, c.body);
          assertOk(reply, 201);
          credentials.add(reply.body.credential);
          assert.equal(reply.body.ttl_days, c.ttl, `${c.query} ${JSON.stringify(c.body)}`);
          const entry = await listEntry(sha256Text(reply.body.credential));
          expectIsoNear(
            entry?.expires_at,
            mainNow() + c.ttl * DAY_MS,
            5 * 60_000,
            `expires_at for ttl ${c.ttl}`,
          );
        }

        const refused: Array<{ query: string; body: Record<string, unknown> }> = [
          { query: '?ttl_days=0', body: {} },
          { query: '?ttl_days=0', body: { ttl_days: 0 } },
          { query: '?ttl_days=3651', body: {} },
          { query: '', body: { ttl_days: 3651 } },
          { query: '?ttl_days=30', body: { ttl_days: 3651 } },
          { query: '', body: { ttl_days: -1 } },
          { query: '', body: { ttl_days: 1.5 } },
          { query: '?ttl_days=abc', body: {} },
        ];
        const before = (await admin.get('/api/credentials')).body.credentials.length;
        for (const c of refused) {
          assertError(await admin.post(`/api/credentials/mint${c.query}`, c.body), 400, /ttl_days/);
        }
        const afterwards = (await admin.get('/api/credentials')).body.credentials.length;
        assert.equal(afterwards, before, 'a refused mint creates no token');
      });

      test('mint shared: max_registrations from 2 to 10000', async () => {
        for (const max of [2, 10_000]) {
          const { body, hash } = await mint(admin, { shared: true, max_registrations: max });
          assert.equal(body.shared, true);
          assert.equal(body.max_registrations, max);
          const entry = await requireEntry(hash);
          assert.equal(entry.shared, true);
          assert.equal(entry.max_registrations, max);
        }
        for (const max of [1, 10_001, 0]) {
          assertError(
            await admin.post('/api/credentials/mint', { shared: true, max_registrations: max }),
            400,
            /max_registrations/,
          );
        }
        assertError(await admin.post('/api/credentials/mint', { shared: 'yes' }), 400, /shared/);
      });

      test('the credentials list holds metadata only, never a credential', async () => {
        const minted = await mint(admin, { shared: true, max_registrations: 3 });
        const list = await admin.get('/api/credentials');
        assertOk(list);
        assert.ok(Array.isArray(list.body.credentials));
        assert.ok(list.body.credentials.length >= 2);
        for (const entry of list.body.credentials) {
          assert.match(entry.token_hash, /^[0-9a-f]{64}$/);
          assert.ok(Number.isFinite(Date.parse(entry.created_at)), `created_at ${entry.created_at}`);
          assert.ok(Number.isFinite(Date.parse(entry.expires_at)), `expires_at ${entry.expires_at}`);
          assert.equal(typeof entry.shared, 'boolean');
          assert.equal(typeof entry.max_registrations, 'number');
          assert.equal(entry.credential, undefined, 'no credential in a list entry');
        }
        for (const secret of credentials) {
          assert.ok(!list.text.includes(secret), 'a minted credential appears in the list');
          // A JWT-like token must not leak through any of its parts either.
          const signature = secret.split('.').pop() ?? secret;
          if (signature.length >= 16)
            assert.ok(!list.text.includes(signature), 'credential signature leaked');
        }
        const entry = (list.body.credentials as CredentialEntry[]).find((c) => c.token_hash === minted.hash);
        assert.ok(entry, 'the new token is listed by sha256(credential)');
        assert.equal(entry.max_registrations, 3);
      });

      test('token management needs an admin: 401 signed out, 403 for a non-admin', async () => {
        const anonymous = new Client(main.url);
        assertError(await anonymous.get('/api/credentials'), 401);
        assertError(await anonymous.post('/api/credentials/mint', {}), 401);

        const username = unique('operator');
        const initial = `${username}-initial`;
        const password = `${username}-password`;
        assertOk(await admin.post('/api/users', { username, password: initial, is_admin: false }), 201);
        const user = new Client(main.url);
        assertOk(await user.login(username, initial));
        assertOk(
          await user.post('/api/session/change-password', {
            current_password: initial,
            new_password: password,
            confirm_new_password: password,
          }),
        );
        const { hash } = await mint(admin, {});
        assertError(await user.get('/api/credentials'), 403);
        assertError(await user.post('/api/credentials/mint', {}), 403);
        assertError(await user.delete(`/api/credentials/${hash}`), 403);
        assertError(await user.delete('/api/credentials/instances/some-scout/0123456789abcdef'), 403);
        assertError(await user.post('/api/admin/uploads/pause'), 403);
        assertError(await user.post('/api/admin/uploads/resume'), 403);
        assertError(await user.post('/api/settings', { retention_keep_last: 1 }), 403);
        assert.ok(await listEntry(hash), 'the token survived the refused revocation');
      });

      test('a Station token opens no /api route; a session cookie does not authenticate /backup', async () => {
        const { credential } = await mint(admin, {});
        const bearer = new Client(main.url);
        assertError(await bearer.get('/api/overview', { token: credential }), 401);
        assertError(await bearer.get('/api/credentials', { token: credential }), 401);
        assertError(await bearer.post('/api/credentials/mint', {}, { token: credential }), 401);

        const data = randomBytes(1000);
        const body = meta(data, { scout_id: unique('cookie'), scout_instance_id: instanceId() });
        // The admin's session cookie is sent, but no Station token.
        assertError(await admin.post('/backup/uploads/initiate', body), 401);
        assertError(await admin.put('/backup/uploads/whatever/chunk?offset=0', {}), 401);
        assertError(await admin.post('/backup/uploads/whatever/finalize'), 401);
        assertError(await initiate(main.url, 'not-a-token', body), 401);
        assertError(
          await rawRequest(main.url, 'POST', '/backup/uploads/initiate', undefined, JSON.stringify(body)),
          401,
        );
        // The token itself works.
        assertOk(await initiate(main.url, credential, body));
      });

      test('revoke by token_hash: the token is 401 on /backup, also for an upload in progress', async () => {
        const { credential, hash } = await mint(admin, {});
        const data = randomBytes(200_000);
        const m = meta(data, {
          scout_id: unique('revoke'),
          scout_instance_id: instanceId(),
          job_name: 'docs',
        });
        const started = await initiate(main.url, credential, m);
        assertOk(started);
        assertOk(await putChunk(main.url, credential, started.body.upload_id, 0, data.subarray(0, 50_000)));

        const revoked = await admin.delete(`/api/credentials/${hash}`);
        assertOk(revoked);
        assertGoneOrRevoked(await listEntry(hash));

        assertError(await initiate(main.url, credential, m), 401);
        assertError(
          await putChunk(main.url, credential, started.body.upload_id, 50_000, data.subarray(50_000)),
          401,
        );
        assertError(await finalize(main.url, credential, started.body.upload_id), 401);
        assertError(
          await call(
            main.url,
            'GET',
            `/backup/recovery/${m.scout_id}/${m.scout_instance_id}/docs/latest`,
            credential,
          ),
          401,
        );

        // An unused token can be revoked too.
        const unused = await mint(admin, {});
        assertOk(await admin.delete(`/api/credentials/${unused.hash}`));
        assertError(
          await initiate(main.url, unused.credential, meta(data, { scout_id: unique('revoke') })),
          401,
        );
        assertError(await admin.delete(`/api/credentials/${'0'.repeat(64)}`), 404);
        assertError(await admin.delete('/api/credentials/not-a-hash'), 400);
      });

      test('revoking a shared token by hash stops it for every instance', async () => {
        const { credential, hash } = await mint(admin, { shared: true, max_registrations: 5 });
        const scout = unique('shared-revoke');
        const instances = [instanceId(), instanceId(), instanceId()];
        for (const inst of instances) {
          assertOk(await initiateAs(credential, scout, inst));
        }
        assertOk(await admin.delete(`/api/credentials/${hash}`));
        for (const inst of instances) {
          assertError(await initiateAs(credential, scout, inst), 401);
        }
      });

      test('revoke by instance returns revoked_rows and affected_instances', async () => {
        const scout = unique('instance-revoke');
        // A normal token bound to one instance.
        const single = await mint(admin, {});
        const a = instanceId();
        assertOk(await initiateAs(single.credential, scout, a));
        const one = await admin.delete(`/api/credentials/instances/${scout}/${a}`);
        assertOk(one);
        assert.equal(one.body.revoked_rows, 1, one.text);
        assert.equal(one.body.affected_instances, 1, one.text);
        assertError(await initiateAs(single.credential, scout, a), 401);

        // A shared token bound to two instances: revoking through one stops both.
        const shared = await mint(admin, { shared: true, max_registrations: 4 });
        const b1 = instanceId();
        const b2 = instanceId();
        for (const inst of [b1, b2]) {
          assertOk(await initiateAs(shared.credential, scout, inst));
        }
        const both = await admin.delete(`/api/credentials/instances/${scout}/${b1}`);
        assertOk(both);
        assert.equal(both.body.revoked_rows, 1, both.text);
        assert.equal(both.body.affected_instances, 2, both.text);
        for (const inst of [b1, b2]) {
          assertError(await initiateAs(shared.credential, scout, inst), 401);
        }
        assertGoneOrRevoked(await listEntry(shared.hash));

        // Nothing bound: nothing revoked.
        const none = await admin.delete(`/api/credentials/instances/${scout}/${instanceId()}`);
        if (none.status === 200) {
          assert.equal(none.body.revoked_rows, 0, none.text);
          assert.equal(none.body.affected_instances, 0, none.text);
        } else {
          assertError(none, 404);
        }
        assertError(
          await admin.delete(`/api/credentials/instances/${scout}/.hidden`),
          400,
          /scout_instance_id/,
        );
      });

      test('an expired Station token is 401', async () => {
        const { credential, hash } = await mint(admin, { ttl_days: 1 });
        const m = () =>
          meta(randomBytes(500), { scout_id: 'expiry-scout', scout_instance_id: 'expiry0000000001' });
        assertOk(await initiate(main.url, credential, m()));
        main.advanceClock(DAY_MS - 10 * 60_000);
        offsets.main += DAY_MS - 10 * 60_000;
        assertOk(await initiate(main.url, credential, m()), 'still valid ten minutes before expiry');
        main.advanceClock(20 * 60_000);
        offsets.main += 20 * 60_000;
        assertError(await initiate(main.url, credential, m()), 401);
        const entry = await listEntry(hash);
        if (entry) assert.ok(Date.parse(entry.expires_at) <= mainNow(), 'expires_at is in the past');
      });
    });

    // ------------------------------------------------------------------ binding

    describe('token binding', () => {
      test('a normal token binds the first instance; another instance is 409', async () => {
        const { credential, hash } = await mint(admin, {});
        const scout = unique('bind');
        const first = instanceId();
        assertOk(await initiateAs(credential, scout, first));
        assertOk(await initiateAs(credential, scout, first), 'the bound instance keeps using it');
        assertError(await initiateAs(credential, scout, instanceId()), 409);
        assertError(await initiateAs(credential, unique('bind'), first), 409);
        const entry = await requireEntry(hash);
        assert.ok(Array.isArray(entry.registrations), `registrations listed: ${JSON.stringify(entry)}`);
        assert.equal(entry.registrations?.length, 1);
      });

      test('20 concurrent initiations on a shared token with max_registrations 5 bind exactly 5', async () => {
        const { credential, hash } = await mint(admin, { shared: true, max_registrations: 5 });
        const scout = unique('race');
        const instances = Array.from({ length: 20 }, () => instanceId());
        const replies = await Promise.all(
          instances.map((inst) =>
            initiate(
              main.url,
              credential,
              meta(randomBytes(300), { scout_id: scout, scout_instance_id: inst }),
            ),
          ),
        );
        const ok = replies.filter((r) => r.status === 200);
        const conflicts = replies.filter((r) => r.status === 409);
        assert.equal(
          ok.length,
          5,
          `statuses: ${replies.map((r) => `${r.status} ${r.status === 200 ? '' : JSON.stringify(r.body)}`).join(', ')}`,
        );
        assert.equal(conflicts.length, 15);
        for (const reply of conflicts) assertError(reply, 409, /registration|bound|instance/i);

        const entry = await requireEntry(hash);
        assert.equal(entry.registrations?.length, 5, JSON.stringify(entry.registrations));
        const bound = new Set((entry.registrations ?? []).map((r) => r.scout_instance_id));
        const winners = instances.filter((_, i) => replies[i]?.status === 200);
        assert.deepEqual([...bound].sort(), [...winners].sort());

        // The winners keep working; a loser is still refused.
        assertOk(await initiateAs(credential, scout, winners[0] as string, 300));
        const loser = instances.find((_, i) => replies[i]?.status === 409) ?? instanceId();
        assertError(await initiateAs(credential, scout, loser, 300), 409);
      });

      test('deleting an instance does not revoke its token', async () => {
        const { credential, hash } = await mint(admin, {});
        const scout = unique('delete-inst');
        const inst = instanceId();
        const data = randomBytes(100_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });
        const stored = await store(main.url, credential, data, m);

        const deleted = await admin.delete(`/api/instances/${scout}/${inst}`);
        assertOk(deleted);
        assert.ok(
          !existsSync(join(snapshotsDir(main, scout, inst, 'docs'), stored.stored_as)),
          'files are gone',
        );
        assert.ok(await listEntry(hash), 'the token is still listed');

        const again = randomBytes(100_000);
        const restored = await store(
          main.url,
          credential,
          again,
          meta(again, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        assert.match(restored.stored_as, STORED_NAME);
        // Still bound to that instance only.
        assertError(await initiateAs(credential, scout, instanceId()), 409);
      });
    });

    // ------------------------------------------------------------------ validation

    describe('initiation validation', () => {
      let token: string;
      const scout = 'validation-scout';
      before(async () => {
        token = (await mint(admin, { shared: true, max_registrations: 10 })).credential;
      });

      test('each missing or malformed field is 400 with a detail naming it', async () => {
        const data = randomBytes(1000);
        const valid = () =>
          meta(data, { scout_id: scout, scout_instance_id: 'validation000001', job_name: 'docs' });
        const required: Array<keyof ArchiveMeta> = [
          'scout_id',
          'scout_instance_id',
          'job_name',
          'fingerprint',
          'timestamp',
          'archive_format',
          'archive_size_bytes',
          'archive_sha256',
          'idempotency_key',
        ];
        for (const field of required) {
          const body: Record<string, unknown> = { ...valid(), [field]: undefined };
          const reply = await call(main.url, 'POST', '/backup/uploads/initiate', token, body);
          assertError(reply, 400, new RegExp(field));
        }

        const malformed: Array<[keyof ArchiveMeta, unknown]> = [
          ['scout_id', '../x'],
          ['scout_id', '.'],
          ['scout_id', '..'],
          ['scout_id', ''],
          ['scout_id', 'a'.repeat(65)],
          ['scout_id', 'a b'],
          ['scout_id', 42],
          ['scout_instance_id', 'a/b'],
          ['scout_instance_id', '.hidden'],
          ['job_name', '.hidden'],
          ['job_name', 'docs/../../etc'],
          ['job_name', 'docs\\x'],
          ['fingerprint', 'ABC'],
          ['fingerprint', 'ABCDEF01'],
          ['fingerprint', 'abcdef0'],
          ['fingerprint', 'a'.repeat(63)],
          ['timestamp', '2026-11-01 12:00:00'],
          ['timestamp', '2026-11-01T12:00:00'],
          ['timestamp', '2026-11-01T12:00:00.000Z'],
          ['timestamp', '2026-11-01T12:00:00+01:00'],
          ['timestamp', '2026-02-30T12:00:00Z'],
          ['archive_format', 'zip'],
          ['archive_format', 'tar.gz'],
          ['archive_size_bytes', 0],
          ['archive_size_bytes', -1],
          ['archive_size_bytes', 1.5],
          ['archive_size_bytes', '1000'],
          ['archive_sha256', 'abc123'],
          ['archive_sha256', 'A'.repeat(64)],
          ['archive_sha256', 'a'.repeat(65)],
          ['idempotency_key', ''],
          ['encryption_key_fingerprint', 'XYZ'],
        ];
        for (const [field, value] of malformed) {
          const body = { ...valid(), [field]: value };
          const reply = await call(main.url, 'POST', '/backup/uploads/initiate', token, body);
          assert.equal(
            reply.status,
            400,
            `${field}=${JSON.stringify(value)}: ${reply.status} ${JSON.stringify(reply.body)}`,
          );
          assertError(reply, 400, new RegExp(field));
        }

        // The boundaries that are allowed.
        for (const overrides of [
          { fingerprint: 'abcdef01' },
          { fingerprint: 'a'.repeat(64) },
          { scout_instance_id: 'A'.repeat(64) },
          { job_name: 'My_Job-1.v2' },
        ]) {
          assertOk(await initiate(main.url, token, { ...valid(), ...overrides }), JSON.stringify(overrides));
        }

        // Nothing of the refused initiations shows up in the overview.
        const overview = await admin.get('/api/overview?section=snapshots');
        const names = (overview.body.scouts as OverviewScout[]).map((s) => s.scout_id);
        for (const bad of ['../x', '.', '..', 'a b', 'x'])
          assert.ok(!names.includes(bad), `scout ${bad} listed`);
      });

      test('a malformed JSON body is 400', async () => {
        for (const raw of ['{"scout_id":', 'not json', '[1,2', '{"a":1}}']) {
          const reply = await rawRequest(main.url, 'POST', '/backup/uploads/initiate', token, raw);
          assertError(reply, 400);
        }
        assertError(
          await rawRequest(main.url, 'POST', '/backup/uploads/initiate', token, '{"scout_id":'),
          400,
          /JSON/i,
        );
        assertError(await rawRequest(main.url, 'POST', '/backup/uploads/initiate', token, '[]'), 400);
        assertError(await rawRequest(main.url, 'POST', '/backup/uploads/initiate', token, 'null'), 400);
        assertError(
          await rawRequest(main.url, 'POST', '/backup/uploads/initiate', token, ''),
          400,
          /scout_id/,
        );
      });
    });

    // ------------------------------------------------------------------ upload flow

    describe('upload flow', () => {
      test('initiate, chunks, finalize: fields, offsets, the stored file and idempotent repeats', async () => {
        const { credential } = await mint(admin, {});
        const other = await mint(admin, {});
        const scout = unique('flow');
        const inst = instanceId();
        const size = 300_000;
        const data = randomBytes(size);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });

        const started = await initiate(main.url, credential, m);
        assertOk(started);
        const id = started.body.upload_id;
        assert.equal(typeof id, 'string');
        assert.ok(id.length > 0);
        assert.equal(started.body.status, 'receiving');
        assert.equal(started.body.next_offset, 0);
        assert.equal(started.body.archive_size_bytes, size);
        assert.ok(
          Number.isSafeInteger(started.body.recommended_chunk_size_bytes) &&
            started.body.recommended_chunk_size_bytes > 0,
          `recommended_chunk_size_bytes ${started.body.recommended_chunk_size_bytes}`,
        );
        assert.deepEqual(started.body.pruned, []);
        assert.equal(started.body.duplicate, false);
        assert.equal(started.body.stored_as ?? undefined, undefined, 'no stored_as before storing');

        const c1 = await putChunk(main.url, credential, id, 0, data.subarray(0, 100_000));
        assertOk(c1);
        assert.deepEqual(
          {
            upload_id: c1.body.upload_id,
            status: c1.body.status,
            next_offset: c1.body.next_offset,
            received_bytes: c1.body.received_bytes,
          },
          { upload_id: id, status: 'receiving', next_offset: 100_000, received_bytes: 100_000 },
        );

        // Offsets that do not match what was received.
        for (const offset of [0, 50_000, 100_001, 200_000]) {
          const wrong = await putChunk(
            main.url,
            credential,
            id,
            offset,
            data.subarray(offset, offset + 1000),
          );
          assertError(wrong, 409);
          assert.equal(wrong.body.detail.status, 'offset_mismatch', JSON.stringify(wrong.body));
          assert.equal(wrong.body.detail.next_offset, 100_000, JSON.stringify(wrong.body));
        }
        // A chunk running past archive_size_bytes is refused and leaves nothing behind.
        assertError(
          await putChunk(main.url, credential, id, 100_000, randomBytes(size - 100_000 + 1)),
          400,
          /archive_size_bytes|past|exceed|size/i,
        );
        const resumed = await initiate(main.url, credential, m);
        assertOk(resumed);
        assert.equal(resumed.body.upload_id, id, 'same idempotency_key resumes the same upload');
        assert.equal(resumed.body.status, 'receiving');
        assert.equal(resumed.body.next_offset, 100_000);
        assert.equal(resumed.body.duplicate, false);

        // Bad offsets and unknown uploads.
        for (const query of ['offset=-1', 'offset=abc', 'offset=1.5', '']) {
          const reply = await call(
            main.url,
            'PUT',
            `/backup/uploads/${id}/chunk?${query}`,
            credential,
            data.subarray(0, 10),
          );
          assertError(reply, 400, /offset/);
        }
        assertError(await putChunk(main.url, credential, 'no-such-upload', 0, data.subarray(0, 10)), 404);
        assertError(await finalize(main.url, credential, 'no-such-upload'), 404);

        // Chunk and finalize belong to the token that owns the session.
        assertError(
          await putChunk(main.url, other.credential, id, 100_000, data.subarray(100_000, 110_000)),
          403,
        );
        assertError(await finalize(main.url, other.credential, id), 403);

        // Finalizing too early.
        const early = await finalize(main.url, credential, id);
        assertError(early, 409);
        if (typeof early.body.detail === 'object') assert.equal(early.body.detail.next_offset, 100_000);

        const c2 = await putChunk(main.url, credential, id, 100_000, data.subarray(100_000, 200_000));
        assertOk(c2);
        assert.equal(c2.body.status, 'receiving');
        assert.equal(c2.body.next_offset, 200_000);
        assert.equal(c2.body.received_bytes, 100_000);
        const c3 = await putChunk(main.url, credential, id, 200_000, data.subarray(200_000));
        assertOk(c3);
        assert.equal(c3.body.status, 'complete');
        assert.equal(c3.body.next_offset, size);
        assert.equal(c3.body.received_bytes, size - 200_000);

        const complete = await initiate(main.url, credential, m);
        assertOk(complete);
        assert.equal(complete.body.status, 'complete');
        assert.equal(complete.body.next_offset, size);

        const done = await finalize(main.url, credential, id);
        assertOk(done);
        assert.equal(done.body.status, 'stored');
        assert.equal(done.body.stored_as, expectedName(m));
        assert.match(done.body.stored_as, STORED_NAME);
        assert.deepEqual(done.body.pruned, []);
        assert.equal(done.body.duplicate, false);
        assert.notEqual(done.body.unusual, true, 'a first snapshot is not unusual');

        const path = join(snapshotsDir(main, scout, inst, 'docs'), done.body.stored_as);
        assert.ok(existsSync(path), `stored at ${path}`);
        assert.ok(readFileSync(path).equals(data), 'the stored file is byte-identical');
        assert.deepEqual(filesIn(snapshotsDir(main, scout, inst, 'docs')), [done.body.stored_as]);

        // Repeats are idempotent.
        const again = await finalize(main.url, credential, id);
        assertOk(again);
        assert.equal(again.body.status, 'stored');
        assert.equal(again.body.stored_as, done.body.stored_as);
        const reinit = await initiate(main.url, credential, m);
        assertOk(reinit);
        assert.equal(reinit.body.status, 'stored');
        assert.equal(reinit.body.stored_as, done.body.stored_as);
        assert.deepEqual(filesIn(snapshotsDir(main, scout, inst, 'docs')), [done.body.stored_as]);

        const listed = await overviewJob(admin, scout, inst, 'docs');
        assert.equal(listed?.length, 1, JSON.stringify(listed));
        assert.equal(listed?.[0]?.name, done.body.stored_as);
        assert.equal(listed?.[0]?.size_bytes, size);
        assert.ok(Number.isFinite(Date.parse(listed?.[0]?.mtime ?? '')), `mtime ${listed?.[0]?.mtime ?? ''}`);
      });

      test('reusing an idempotency_key with another checksum, size or namespace is 409', async () => {
        const { credential } = await mint(admin, { shared: true, max_registrations: 10 });
        const scout = unique('idem');
        const inst = instanceId();
        const data = randomBytes(50_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });
        assertOk(await initiate(main.url, credential, m));
        assertOk(
          await putChunk(
            main.url,
            credential,
            (await initiate(main.url, credential, m)).body.upload_id,
            0,
            data.subarray(0, 20_000),
          ),
        );

        const variants: Array<Partial<ArchiveMeta>> = [
          { archive_sha256: sha256(randomBytes(10)) },
          { archive_size_bytes: data.length + 1 },
          { job_name: 'other-job' },
          { scout_instance_id: instanceId() },
          { scout_id: unique('idem') },
        ];
        for (const change of variants) {
          assertError(await initiate(main.url, credential, { ...m, ...change }), 409, /idempotency/i);
        }
        const resumed = await initiate(main.url, credential, m);
        assertOk(resumed);
        assert.equal(resumed.body.next_offset, 20_000, 'the original upload is untouched');
      });

      test('identical bytes under a new key are a duplicate: stored_as of the first, nothing new on disk', async () => {
        const { credential } = await mint(admin, {});
        const scout = unique('dup');
        const inst = instanceId();
        const data = randomBytes(120_000);
        const first = await store(
          main.url,
          credential,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        const dir = snapshotsDir(main, scout, inst, 'docs');
        assert.deepEqual(filesIn(dir), [first.stored_as]);

        const second = await initiate(
          main.url,
          credential,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        assertOk(second);
        assert.equal(second.body.status, 'stored', JSON.stringify(second.body));
        assert.equal(second.body.duplicate, true);
        assert.equal(second.body.stored_as, first.stored_as);
        assert.deepEqual(second.body.pruned, []);
        assert.deepEqual(filesIn(dir), [first.stored_as], 'nothing new on disk');
        const fin = await finalize(main.url, credential, second.body.upload_id);
        assertOk(fin);
        assert.equal(fin.body.status, 'stored');
        assert.equal(fin.body.stored_as, first.stored_as);
        assert.deepEqual(filesIn(dir), [first.stored_as]);
        assert.equal((await overviewJob(admin, scout, inst, 'docs'))?.length, 1);
      });

      test('same timestamp and fingerprint with different bytes is stored as -2, -3', async () => {
        const { credential } = await mint(admin, {});
        const scout = unique('clash');
        const inst = instanceId();
        const timestamp = nextTimestamp();
        const fingerprint = sha256(randomBytes(8));
        const blobs = [randomBytes(60_000), randomBytes(60_000), randomBytes(60_000)];
        const names: string[] = [];
        for (const blob of blobs) {
          const m = archiveMeta(blob, {
            scout_id: scout,
            scout_instance_id: inst,
            job_name: 'docs',
            timestamp,
            fingerprint,
          });
          names.push((await store(main.url, credential, blob, m)).stored_as);
        }
        const base = `docs__${timestamp.replaceAll(':', '-')}__${fingerprint.slice(0, 8)}`;
        assert.deepEqual(names, [`${base}.tar.zst`, `${base}-2.tar.zst`, `${base}-3.tar.zst`]);
        const dir = snapshotsDir(main, scout, inst, 'docs');
        names.forEach((name, i) => {
          assert.ok(readFileSync(join(dir, name)).equals(blobs[i] as Buffer), `${name} holds its own bytes`);
        });
      });
    });

    // ------------------------------------------------------------------ checksum mismatch

    describe('checksum mismatch', () => {
      test('a wrong archive_sha256 is 409 checksum_mismatch; the bytes are discarded and nothing is stored', async () => {
        const { credential } = await mint(admin, {});
        const scout = unique('mismatch');
        const inst = instanceId();
        const data = randomBytes(150_000);
        const m = meta(data, {
          scout_id: scout,
          scout_instance_id: inst,
          job_name: 'docs',
          archive_sha256: sha256(randomBytes(16)),
        });
        const started = await initiate(main.url, credential, m);
        assertOk(started);
        const id = started.body.upload_id;
        assertOk(await putChunk(main.url, credential, id, 0, data.subarray(0, 100_000)));
        const last = await putChunk(main.url, credential, id, 100_000, data.subarray(100_000));
        assertOk(last);
        assert.equal(last.body.status, 'complete');

        const fin = await finalize(main.url, credential, id);
        assertError(fin, 409);
        assert.equal(typeof fin.body.detail, 'object', JSON.stringify(fin.body));
        assert.equal(fin.body.detail.status, 'checksum_mismatch');
        assert.equal(fin.body.detail.next_offset, 0);
        assert.equal(typeof fin.body.detail.message, 'string');
        assert.ok(fin.body.detail.message.length > 0);

        const again = await initiate(main.url, credential, m);
        assertOk(again);
        assert.equal(again.body.upload_id, id);
        assert.equal(again.body.next_offset, 0, 'the same idempotency_key starts again at 0');
        assert.equal(again.body.status, 'receiving');
        const probe = await putChunk(main.url, credential, id, 100_000, data.subarray(0, 10));
        assertError(probe, 409);
        assert.equal(probe.body.detail.next_offset, 0);

        assert.deepEqual(filesUnder(join(main.dataDir, 'snapshots', scout)), [], 'nothing under snapshots/');
        assert.equal((await overviewJob(admin, scout, inst, 'docs'))?.length ?? 0, 0);
        // Staged bytes discarded: no staged file holds the archive any more.
        for (const name of filesIn(join(main.dataDir, 'staging'))) {
          assert.notEqual(
            statSync(join(main.dataDir, 'staging', name)).size,
            data.length,
            `${name} still staged`,
          );
        }

        // Sending the bytes again gets the same verdict, from offset 0.
        assertOk(await putChunk(main.url, credential, id, 0, data));
        assertError(await finalize(main.url, credential, id), 409, /checksum_mismatch/);
      });
    });

    // ------------------------------------------------------------------ limits

    describe('limits', () => {
      test('archive_size_bytes above MAX_UPLOAD_BYTES is 413', async () => {
        const health = await new Client(main.url).get('/health');
        assert.equal(health.body.max_upload_bytes, MAX_UPLOAD);
        const { credential } = await mint(admin, {});
        const scout = unique('limit');
        const inst = instanceId();
        const data = randomBytes(100);
        for (const size of [MAX_UPLOAD + 1, 10 * MAX_UPLOAD]) {
          assertError(
            await initiate(
              main.url,
              credential,
              meta(data, { scout_id: scout, scout_instance_id: inst, archive_size_bytes: size }),
            ),
            413,
          );
        }
        assertOk(
          await initiate(
            main.url,
            credential,
            meta(data, { scout_id: scout, scout_instance_id: inst, archive_size_bytes: MAX_UPLOAD }),
          ),
          'exactly the limit is accepted',
        );
      });

      test('paused uploads are 503; resume accepts them again', async () => {
        const { credential } = await mint(admin, {});
        const scout = unique('pause');
        const inst = instanceId();
        const data = randomBytes(40_000);
        try {
          assertOk(await admin.post('/api/admin/uploads/pause'));
          assertError(
            await initiate(main.url, credential, meta(data, { scout_id: scout, scout_instance_id: inst })),
            503,
            /pause/i,
          );
        } finally {
          assertOk(await admin.post('/api/admin/uploads/resume'));
        }
        const stored = await store(
          main.url,
          credential,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        assert.match(stored.stored_as, STORED_NAME);
      });
    });

    // ------------------------------------------------------------------ unusual snapshots

    describe('unusual snapshots', () => {
      test('less than half, more than double, or another key fingerprint is unusual', async () => {
        const { credential } = await mint(admin, {});
        const scout = unique('unusual');
        const inst = instanceId();
        const keyA = sha256(randomBytes(8));
        const keyB = sha256(randomBytes(8));
        const steps: Array<{ size: number; key: string; unusual: boolean; why?: RegExp }> = [
          { size: 200_000, key: keyA, unusual: false },
          { size: 100_000, key: keyA, unusual: false }, // exactly half
          { size: 49_999, key: keyA, unusual: true, why: /half|small|less/i },
          { size: 99_998, key: keyA, unusual: false }, // exactly double
          { size: 200_000, key: keyA, unusual: true, why: /double|large|more/i },
          { size: 210_000, key: keyB, unusual: true, why: /key|fingerprint/i },
          { size: 220_000, key: keyB, unusual: false },
        ];
        const names: string[] = [];
        for (const step of steps) {
          const data = randomBytes(step.size);
          const done = await store(
            main.url,
            credential,
            data,
            meta(data, {
              scout_id: scout,
              scout_instance_id: inst,
              job_name: 'docs',
              encryption_key_fingerprint: step.key,
            }),
          );
          names.push(done.stored_as);
          if (step.unusual) {
            assert.equal(done.unusual, true, `${step.size}: ${JSON.stringify(done)}`);
            assert.equal(typeof done.unusual_reason, 'string', JSON.stringify(done));
            assert.match(done.unusual_reason ?? '', step.why as RegExp);
          } else {
            assert.notEqual(done.unusual, true, `${step.size} is not unusual: ${JSON.stringify(done)}`);
          }
        }
        const listed = await overviewJob(admin, scout, inst, 'docs');
        assert.equal(listed?.length, steps.length);
        steps.forEach((step, i) => {
          const entry = listed?.find((s) => s.name === names[i]);
          assert.ok(entry, `${names[i]} listed`);
          if (step.unusual) {
            assert.equal(entry.unusual, true, JSON.stringify(entry));
            assert.equal(typeof entry.unusual_reason, 'string', JSON.stringify(entry));
          } else {
            assert.notEqual(entry.unusual, true, JSON.stringify(entry));
          }
        });
      });
    });

    // ------------------------------------------------------------------ retention

    describe('retention', () => {
      test('retention_keep_last prunes the job on finalize and reports it; other jobs and instances untouched', async () => {
        const { credential } = await mint(admin, { shared: true, max_registrations: 2 });
        const scout = unique('retention');
        const inst = instanceId();
        const otherInst = instanceId();
        const upload = async (i: string, job: string) => {
          const data = randomBytes(50_000);
          return store(
            main.url,
            credential,
            data,
            meta(data, { scout_id: scout, scout_instance_id: i, job_name: job }),
          );
        };
        // Three snapshots each in another job and another instance, kept under the default.
        const otherJob: string[] = [];
        const otherInstance: string[] = [];
        for (let n = 0; n < 3; n += 1) {
          otherJob.push((await upload(inst, 'photos')).stored_as);
          otherInstance.push((await upload(otherInst, 'docs')).stored_as);
        }
        try {
          const set = await admin.post('/api/settings', { retention_keep_last: 2 });
          assertOk(set);
          assert.equal(set.body.settings.retention_keep_last, 2);

          const names: string[] = [];
          const pruned: string[][] = [];
          for (let n = 0; n < 4; n += 1) {
            const done = await upload(inst, 'docs');
            names.push(done.stored_as);
            pruned.push(done.pruned);
          }
          assert.deepEqual(pruned, [[], [], [names[0]], [names[1]]]);
          const dir = snapshotsDir(main, scout, inst, 'docs');
          assert.deepEqual(filesIn(dir), [names[2], names[3]].sort());
          const listed = await overviewJob(admin, scout, inst, 'docs');
          assert.deepEqual(listed?.map((s) => s.name).sort(), [names[2], names[3]].sort());

          assert.deepEqual(filesIn(snapshotsDir(main, scout, inst, 'photos')), [...otherJob].sort());
          assert.deepEqual(filesIn(snapshotsDir(main, scout, otherInst, 'docs')), [...otherInstance].sort());
          assert.equal((await overviewJob(admin, scout, inst, 'photos'))?.length, 3);
          assert.equal((await overviewJob(admin, scout, otherInst, 'docs'))?.length, 3);
        } finally {
          assertOk(await admin.post('/api/settings', {}));
        }
        const reset = await admin.get('/api/overview?section=settings');
        assert.equal(reset.body.settings.retention_keep_last, 30);
      });
    });

    // ------------------------------------------------------------------ second Station

    describe('disk space, unusable storage, crash and abandoned uploads (second Station)', () => {
      let token: string;
      const scout = 'aux-scout';
      const inst = 'aux0000000000001';
      const staging = () => join(aux.dataDir, 'staging');

      before(async () => {
        const reply = await auxAdmin.post('/api/credentials/mint', {});
        assertOk(reply, 201);
        token = reply.body.credential;
      });

      test('a declared size beyond the free staging space is 507; nothing is staged, no session kept', async () => {
        assert.deepEqual(filesIn(staging()), [], 'staging starts empty');
        const data = randomBytes(80_000);
        const key = `key-${randomBytes(8).toString('hex')}`;
        const huge = meta(data, {
          scout_id: scout,
          scout_instance_id: inst,
          job_name: 'big',
          archive_size_bytes: 500 * 1000 ** 4,
          idempotency_key: key,
        });
        const refused = await initiate(aux.url, token, huge);
        assertError(refused, 507, /space|disk/i);
        assert.deepEqual(filesIn(staging()), [], 'nothing left in staging');
        assert.equal((await overviewJob(auxAdmin, scout, inst, 'big'))?.length ?? 0, 0);

        // No session was kept under that key: the same key with other metadata is a new upload.
        const fresh = await initiate(
          aux.url,
          token,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'big', idempotency_key: key }),
        );
        assertOk(fresh);
        assert.equal(fresh.body.next_offset, 0);
        assert.equal(fresh.body.status, 'receiving');
        assertOk(await putChunk(aux.url, token, fresh.body.upload_id, 0, data));
        const fin = await finalize(aux.url, token, fresh.body.upload_id);
        assertOk(fin);
        assert.deepEqual(filesIn(staging()), [], 'a stored upload leaves nothing staged');
      });

      test('unusable staging or snapshot storage is 503; usable again afterwards', async () => {
        const data = randomBytes(10_000);
        for (const dirName of ['staging', 'snapshots']) {
          const dir = join(aux.dataDir, dirName);
          const moved = `${dir}.moved-away`;
          renameSync(dir, moved);
          writeFileSync(dir, 'not a folder');
          try {
            assertError(
              await initiate(
                aux.url,
                token,
                meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'unusable' }),
              ),
              503,
            );
            assertError(await new Client(aux.url).get('/health/ready'), 503);
          } finally {
            rmSync(dir, { force: true });
            renameSync(moved, dir);
          }
        }
        assertOk(await new Client(aux.url).get('/health/ready'));
        const done = await store(
          aux.url,
          token,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'unusable' }),
        );
        assert.match(done.stored_as, STORED_NAME);
      });

      test('SIGKILL mid-upload: after restart the same idempotency_key resumes where the bytes stopped', async () => {
        const size = 1_500_000;
        const data = randomBytes(size);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'crash' });
        const started = await initiate(aux.url, token, m);
        assertOk(started);
        const id = started.body.upload_id;
        const chunk = 256 * 1024;
        assertOk(await putChunk(aux.url, token, id, 0, data.subarray(0, chunk)));
        assertOk(await putChunk(aux.url, token, id, chunk, data.subarray(chunk, 2 * chunk)));

        // Killed between chunks.
        await aux.kill();
        aux = await aux.restart();
        const afterFirst = await initiate(aux.url, token, m);
        assertOk(afterFirst);
        assert.equal(afterFirst.body.upload_id, id);
        assert.equal(afterFirst.body.next_offset, 2 * chunk);
        assert.equal(afterFirst.body.status, 'receiving');

        // Killed while a chunk is streaming in: part of it has arrived.
        const stagedBefore = new Set(filesIn(staging()));
        let sent = false;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (!sent) {
              sent = true;
              controller.enqueue(data.subarray(2 * chunk, 2 * chunk + 300_000));
            }
            // then stall: the rest never comes
          },
        });
        const inFlight = fetch(`${aux.url}/backup/uploads/${id}/chunk?offset=${2 * chunk}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
          body,
          duplex: 'half',
        } as RequestInit).then(
          (res) => res.status,
          () => 'failed',
        );
        // Wait (bounded) until the server has written some of the streamed bytes.
        const deadline = Date.now() + 10_000;
        const largest = () =>
          Math.max(0, ...filesIn(staging()).map((f) => statSync(join(staging(), f)).size));
        while (Date.now() < deadline && largest() <= 2 * chunk) {
          await new Promise((r) => setTimeout(r, 20));
        }
        await aux.kill();
        await body.cancel().catch(() => {});
        assert.equal(await inFlight, 'failed', 'the streaming request died with the server');
        const onDisk = largest();
        assert.ok(stagedBefore.size > 0, 'the staged file survived the first restart');
        assert.ok(onDisk > 2 * chunk, `some streamed bytes arrived before the kill (${onDisk})`);

        aux = await aux.restart();
        const afterSecond = await initiate(aux.url, token, m);
        assertOk(afterSecond);
        assert.equal(afterSecond.body.upload_id, id);
        assert.equal(afterSecond.body.next_offset, onDisk, 'next_offset = bytes received before the kill');

        let offset: number = afterSecond.body.next_offset;
        while (offset < size) {
          const reply = await putChunk(aux.url, token, id, offset, data.subarray(offset, offset + chunk));
          assertOk(reply);
          offset = reply.body.next_offset;
        }
        const fin = await finalize(aux.url, token, id);
        assertOk(fin);
        assert.equal(fin.body.status, 'stored');
        assert.equal(fin.body.stored_as, expectedName(m));
        const stored = readFileSync(join(snapshotsDir(aux, scout, inst, 'crash'), fin.body.stored_as));
        assert.ok(stored.equals(data), 'the stored file is byte-identical to the original');
      });

      test('an upload untouched for 24 h is swept: staged bytes removed, its upload_id is 404', async () => {
        const data = randomBytes(200_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'abandoned' });
        const stagedBefore = new Set(filesIn(staging()));
        const started = await initiate(aux.url, token, m);
        assertOk(started);
        const id = started.body.upload_id;
        assertOk(await putChunk(aux.url, token, id, 0, data.subarray(0, 100_000)));
        const mine = filesIn(staging()).filter((f) => !stagedBefore.has(f));
        assert.equal(mine.length, 1, `one staged file for the upload: ${mine}`);

        aux.advanceClock(25 * HOUR_MS);
        offsets.aux += 25 * HOUR_MS;
        // Any new initiation triggers the sweep.
        const trigger = randomBytes(1000);
        assertOk(
          await initiate(
            aux.url,
            token,
            meta(trigger, { scout_id: scout, scout_instance_id: inst, job_name: 'trigger' }),
          ),
        );

        for (const f of mine) assert.ok(!existsSync(join(staging(), f)), `${f} was removed`);
        assertError(await putChunk(aux.url, token, id, 100_000, data.subarray(100_000)), 404);
        assertError(await finalize(aux.url, token, id), 404);
        const again = await initiate(aux.url, token, m);
        assertOk(again);
        assert.notEqual(again.body.upload_id, id, 'the old key starts a new upload');
        assert.equal(again.body.next_offset, 0);
      });
    });
  });
}
