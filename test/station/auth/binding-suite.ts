// Instance binding is a reservation, and recovery tokens (docs/protocol.md:
// Station tokens; docs/extensions.md: Instance binding and recovery tokens; issue #13 item 1,
// issue #18 item 2). Runs on PGlite (one Station) and on PostgreSQL (two Stations on one
// database, sharing the signing key, as behind a load balancer): see the two runner files.
//
// The Stations are shared by the tests, which run in order; every test uses its own Scout and
// instance names. Uploads that store bytes go to the first Station (each Station has its own
// disk); initiations alone go to either. The clock only moves forward, in the last test.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../../src/core/clock.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { adminClient, type Client, type Reply } from '../../helpers/http.ts';
import type { TestServer } from '../../helpers/server.ts';
import {
  type ArchiveMeta,
  archiveMeta,
  call,
  finalize,
  initiate,
  putChunk,
  upload,
} from '../../helpers/uploads.ts';

/** Starts the Stations of the suite: one, or several on one database. */
export type StartStations = () => Promise<TestServer[]>;

interface AnyReply {
  status: number;
  body: Reply['body'];
}

interface Registration {
  scout_id: string;
  scout_instance_id: string;
}

const show = (reply: { body: unknown }) => JSON.stringify(reply.body);

function expectStatus(reply: AnyReply, status: number, what = ''): void {
  assert.equal(
    reply.status,
    status,
    `${what}${what ? ': ' : ''}expected ${status}, got ${reply.status}: ${show(reply)}`,
  );
}

/** A refusal with a stable `code` and a `detail` that says what to do. */
function expectRefusal(reply: AnyReply, status: number, code: string, detail: RegExp, what = ''): void {
  expectStatus(reply, status, what);
  assert.equal(reply.body?.code, code, `${what} code: ${show(reply)}`);
  assert.equal(typeof reply.body?.detail, 'string', `${what} detail: ${show(reply)}`);
  assert.match(reply.body.detail, detail, `${what} detail`);
}

let counter = 0;
const uniqueScout = (prefix: string) => {
  counter += 1;
  return `${prefix}-${counter}`;
};
const freshInstance = () => randomBytes(8).toString('hex');

let minute = 0;
/** Increasing snapshot timestamps, one minute apart. */
const nextTimestamp = () => {
  minute += 1;
  return utcSecond(Date.UTC(2026, 10, 2) + minute * 60_000);
};

export function bindingSuite(label: string, start: StartStations): void {
  describe(label, () => {
    let stations: TestServer[];
    let main: TestServer;
    let admin: Client;

    before(async () => {
      stations = await start();
      main = stations[0] as TestServer;
      admin = await adminClient(main.url);
    });

    after(async () => {
      await Promise.all((stations ?? []).map((s) => s.dispose()));
    });

    /** The i-th Station, round robin: consecutive requests reach different Stations. */
    const station = (i: number) => stations[i % stations.length] as TestServer;

    async function mint(
      body: Record<string, unknown> = {},
    ): Promise<{ credential: string; body: Reply['body'] }> {
      const reply = await admin.post('/api/credentials/mint', body);
      expectStatus(reply, 201, `mint ${JSON.stringify(body)}`);
      return { credential: reply.body.credential, body: reply.body };
    }

    function metaFor(scout: string, inst: string, data: Uint8Array, extra: Partial<ArchiveMeta> = {}) {
      return archiveMeta(data, {
        scout_id: scout,
        scout_instance_id: inst,
        job_name: 'docs',
        timestamp: nextTimestamp(),
        ...extra,
      });
    }

    /** Stores `data` on the first Station as scout/inst with the token; returns the stored name. */
    async function stored(token: string, scout: string, inst: string, data: Uint8Array): Promise<string> {
      const done = await upload(main.url, token, data, metaFor(scout, inst, data));
      expectStatus(done.initiate, 200, 'initiate');
      assert.ok(done.finalize, 'finalized');
      expectStatus(done.finalize, 200, 'finalize');
      return done.finalize.body.stored_as;
    }

    const latest = (url: string, token: string, scout: string, inst: string) =>
      fetch(`${url}/backup/recovery/${scout}/${inst}/docs/latest`, {
        headers: { authorization: `Bearer ${token}` },
      });

    async function registrations(): Promise<Map<string, Registration[]>> {
      const reply = await admin.get('/api/credentials');
      expectStatus(reply, 200);
      return new Map(
        (reply.body.credentials as Array<{ token_hash: string; registrations: Registration[] }>).map((c) => [
          c.token_hash,
          c.registrations,
        ]),
      );
    }

    async function advertisedUrl(scout: string, inst: string): Promise<string | null | undefined> {
      const reply = await admin.get('/api/overview');
      expectStatus(reply, 200);
      const s = (
        reply.body.scouts as Array<{ scout_id: string; instances: Array<Record<string, unknown>> }>
      ).find((x) => x.scout_id === scout);
      return s?.instances.find((i) => i.scout_instance_id === inst)?.advertised_url as
        | string
        | null
        | undefined;
    }

    test('a second token cannot initiate, download, take over sessions or re-advertise a bound instance', async () => {
      const scout = uniqueScout('host-a');
      const inst = '0123456789abcdef';
      const a = await mint();
      const data = randomBytes(40_000);
      const firstMeta = metaFor(scout, inst, data, { advertised_url: 'http://host-a.lan:6556' });
      const first = await upload(main.url, a.credential, data, firstMeta);
      expectStatus(first.finalize as AnyReply, 200, 'token A stores');
      // An upload of A in progress, which B must not take over.
      const pending = randomBytes(20_000);
      const pendingMeta = metaFor(scout, inst, pending);
      const started = await initiate(main.url, a.credential, pendingMeta);
      expectStatus(started, 200);
      expectStatus(
        await putChunk(main.url, a.credential, started.body.upload_id, 0, pending.subarray(0, 5_000)),
        200,
      );

      const b = await mint();
      for (const [i, server] of stations.entries()) {
        const junk = randomBytes(500);
        expectRefusal(
          await initiate(
            server.url,
            b.credential,
            metaFor(scout, inst, junk, { advertised_url: 'http://evil:1' }),
          ),
          409,
          'binding_conflict',
          /revoke the old token first/,
          `B initiates on Station ${i}`,
        );
        // A's own idempotency key: no takeover of the session.
        const takeover = await initiate(server.url, b.credential, pendingMeta);
        assert.equal(takeover.status, 409, `B re-initiates A's session: ${show(takeover)}`);
        expectRefusal(
          await call(server.url, 'GET', `/backup/recovery/${scout}/${inst}/docs/latest`, b.credential),
          403,
          'not_bound',
          /not bound/,
          `B reads latest on Station ${i}`,
        );
        expectStatus(
          await call(
            server.url,
            'GET',
            `/backup/recovery/${scout}/${inst}/docs/by-fingerprint?fp=${firstMeta.fingerprint}`,
            b.credential,
          ),
          403,
          'B by-fingerprint',
        );
        expectStatus(
          await call(
            server.url,
            'GET',
            `/backup/recovery/${scout}/${inst}/docs/archive/${first.finalize?.body.stored_as}`,
            b.credential,
          ),
          403,
          'B exact archive',
        );
      }
      expectStatus(
        await putChunk(main.url, b.credential, started.body.upload_id, 5_000, pending.subarray(5_000)),
        403,
        "B sends a chunk to A's session",
      );
      expectStatus(
        await finalize(main.url, b.credential, started.body.upload_id),
        403,
        "B finalizes A's session",
      );

      // Nothing of B stuck: not bound, the instance still advertises A's URL, A carries on.
      const regs = await registrations();
      assert.deepEqual(regs.get(sha256(b.credential)), [], 'B is bound to nothing');
      // Kept pinned to the address A connected from (issue #23 item 7; hint-target.ts).
      assert.equal(await advertisedUrl(scout, inst), 'http://127.0.0.1:6556/');
      expectStatus(
        await putChunk(main.url, a.credential, started.body.upload_id, 5_000, pending.subarray(5_000)),
        200,
        'A resumes its session',
      );
      expectStatus(await finalize(main.url, a.credential, started.body.upload_id), 200, 'A finalizes');
      const res = await latest(main.url, a.credential, scout, inst);
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(pending), 'latest is A’s newest snapshot');
    });

    test('shared tokens: neither takes a bound instance nor lets another token take theirs', async () => {
      const scout = uniqueScout('shared');
      const normalInst = freshInstance();
      const sharedInst = freshInstance();
      const normal = await mint();
      const shared = await mint({ shared: true, max_registrations: 5 });
      expectStatus(
        await initiate(main.url, normal.credential, metaFor(scout, normalInst, randomBytes(300))),
        200,
      );
      expectStatus(
        await initiate(main.url, shared.credential, metaFor(scout, sharedInst, randomBytes(300))),
        200,
      );

      expectRefusal(
        await initiate(station(1).url, shared.credential, metaFor(scout, normalInst, randomBytes(300))),
        409,
        'binding_conflict',
        /revoke the old token first/,
        'shared token on an instance bound to a normal token',
      );
      expectRefusal(
        await initiate(station(1).url, normal.credential, metaFor(scout, sharedInst, randomBytes(300))),
        409,
        'binding_conflict',
        /bound to another Scout instance|revoke/,
        'a normal token already bound elsewhere',
      );
      const other = await mint({ shared: true, max_registrations: 3 });
      expectRefusal(
        await initiate(station(1).url, other.credential, metaFor(scout, sharedInst, randomBytes(300))),
        409,
        'binding_conflict',
        /revoke the old token first/,
        'another shared token on an instance bound to a shared token',
      );
      expectStatus(
        await call(
          station(1).url,
          'GET',
          `/backup/recovery/${scout}/${sharedInst}/docs/latest`,
          other.credential,
        ),
        403,
      );
      // The shared token still serves its own instance and binds fresh ones.
      expectStatus(
        await initiate(main.url, shared.credential, metaFor(scout, sharedInst, randomBytes(300))),
        200,
      );
      expectStatus(
        await initiate(main.url, shared.credential, metaFor(scout, freshInstance(), randomBytes(300))),
        200,
      );
    });

    test('rotation: revoke the old token (by hash or by instance), then the new token binds and recovers', async () => {
      const scout = uniqueScout('rotate');
      const inst = freshInstance();
      const old = await mint();
      const data = randomBytes(30_000);
      await stored(old.credential, scout, inst, data);

      const byHash = await mint();
      expectStatus(await initiate(main.url, byHash.credential, metaFor(scout, inst, randomBytes(300))), 409);
      expectStatus(await admin.delete(`/api/credentials/${sha256(old.credential)}`), 200);
      expectStatus(
        await initiate(station(1).url, byHash.credential, metaFor(scout, inst, randomBytes(300))),
        200,
        'after revoke by hash',
      );
      const res = await latest(main.url, byHash.credential, scout, inst);
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(data), 'the new token reads the old snapshots');

      const byInstance = await mint();
      expectStatus(
        await initiate(main.url, byInstance.credential, metaFor(scout, inst, randomBytes(300))),
        409,
      );
      const revoked = await admin.delete(`/api/credentials/instances/${scout}/${inst}`);
      expectStatus(revoked, 200);
      assert.equal(revoked.body.revoked_rows, 1, show(revoked));
      expectStatus(
        await initiate(station(1).url, byInstance.credential, metaFor(scout, inst, randomBytes(300))),
        200,
        'after revoke by instance',
      );
    });

    test('two tokens initiating for the same fresh instance at once: exactly one wins', async () => {
      const scout = uniqueScout('race');
      const rounds = 8;
      const contenders = 3;
      const instances = Array.from({ length: rounds }, () => freshInstance());
      const tokens = await Promise.all(
        Array.from({ length: rounds * contenders }, () => mint().then((m) => m.credential)),
      );
      // Every contender of every round at once, spread over the Stations.
      const replies = await Promise.all(
        tokens.map((token, i) =>
          initiate(station(i).url, token, metaFor(scout, instances[i % rounds] as string, randomBytes(300))),
        ),
      );
      const regs = await registrations();
      for (const [r, inst] of instances.entries()) {
        const mine = replies.map((reply, i) => ({ reply, i })).filter(({ i }) => i % rounds === r);
        const winners = mine.filter(({ reply }) => reply.status === 200);
        assert.equal(
          winners.length,
          1,
          `instance ${inst}: ${mine.map(({ reply }) => `${reply.status} ${show(reply)}`).join(' | ')}`,
        );
        for (const { reply } of mine.filter(({ reply }) => reply.status !== 200)) {
          expectRefusal(reply, 409, 'binding_conflict', /revoke the old token first/, 'a loser');
        }
        const boundTokens = await Promise.all(
          mine.map(async ({ i }) => (regs.get(sha256(tokens[i] as string)) ?? []).length),
        );
        assert.deepEqual(
          boundTokens.toSorted(),
          [...Array(contenders - 1).fill(0), 1],
          `one token bound to ${inst}`,
        );
      }
    });

    test('recovery tokens: mint bound to an existing instance; validation; other tokens stay until revoked', async () => {
      const scout = uniqueScout('recover');
      const inst = freshInstance();
      const original = await mint();
      const data = randomBytes(25_000);
      await stored(original.credential, scout, inst, data);

      // Validation: both or neither, a known instance, namespace rules, one instance only.
      for (const [body, status, about] of [
        [{ scout_id: scout }, 400, /both scout_id and scout_instance_id/],
        [{ scout_instance_id: inst }, 400, /both scout_id and scout_instance_id/],
        [{ scout_id: scout, scout_instance_id: freshInstance() }, 404, /no Scout instance/],
        [{ scout_id: 'nobody-here', scout_instance_id: inst }, 404, /no Scout instance/],
        [{ scout_id: '../etc', scout_instance_id: inst }, 400, /scout_id/],
        [{ scout_id: scout, scout_instance_id: '.hidden' }, 400, /scout_instance_id/],
        [{ scout_id: scout, scout_instance_id: 7 }, 400, /scout_instance_id/],
        [{ scout_id: scout, scout_instance_id: inst, shared: true }, 400, /one instance/],
        [{ revoke_other_tokens: true }, 400, /revoke_other_tokens/],
      ] as const) {
        const reply = await admin.post('/api/credentials/mint', body);
        expectStatus(reply, status, JSON.stringify(body));
        assert.match(String(reply.body.detail), about, JSON.stringify(body));
      }

      const recovery = await mint({ scout_id: scout, scout_instance_id: inst, ttl_days: 7 });
      assert.equal(recovery.body.scout_id, scout);
      assert.equal(recovery.body.scout_instance_id, inst);
      assert.equal(recovery.body.other_live_tokens, 1, show(recovery));
      assert.equal(recovery.body.ttl_days, 7);
      assert.match(recovery.body.message, /other token stays valid until you revoke it/);
      const regs = await registrations();
      assert.deepEqual(
        regs.get(sha256(recovery.credential))?.map((r) => [r.scout_id, r.scout_instance_id]),
        [[scout, inst]],
        'minted already bound',
      );

      // It recovers at once, before any upload of its own.
      const res = await latest(main.url, recovery.credential, scout, inst);
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(data), 'recovered bytes');
      // Both tokens are bound: each may initiate; a third token is still refused.
      expectStatus(
        await initiate(station(1).url, original.credential, metaFor(scout, inst, randomBytes(300))),
        200,
      );
      expectStatus(
        await initiate(station(1).url, recovery.credential, metaFor(scout, inst, randomBytes(300))),
        200,
      );
      const stranger = await mint();
      expectStatus(
        await initiate(main.url, stranger.credential, metaFor(scout, inst, randomBytes(300))),
        409,
      );
      // A recovery token binds nothing else.
      expectStatus(
        await initiate(main.url, recovery.credential, metaFor(scout, freshInstance(), randomBytes(300))),
        409,
      );

      // Mint with revoke_other_tokens: every other token of the instance goes, the new one stays.
      const rebuilt = await mint({ scout_id: scout, scout_instance_id: inst, revoke_other_tokens: true });
      assert.equal(rebuilt.body.revoked_rows, 2, show(rebuilt));
      assert.equal(rebuilt.body.other_live_tokens, 0, show(rebuilt));
      expectStatus(
        await initiate(main.url, original.credential, metaFor(scout, inst, randomBytes(300))),
        401,
      );
      expectStatus(
        await initiate(main.url, recovery.credential, metaFor(scout, inst, randomBytes(300))),
        401,
      );
      const again = await latest(main.url, rebuilt.credential, scout, inst);
      assert.equal(again.status, 200);
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(data), 'recovered with the rebuilt token');
      // The stranger binds once the instance's tokens are revoked.
      expectStatus(await admin.delete(`/api/credentials/instances/${scout}/${inst}`), 200);
      expectStatus(
        await initiate(main.url, stranger.credential, metaFor(scout, inst, randomBytes(300))),
        200,
      );
    });

    test('an instance whose only bound token expired can be bound by a new token', async () => {
      const scout = uniqueScout('expired');
      const inst = freshInstance();
      const shortLived = await mint({ ttl_days: 1 });
      const data = randomBytes(10_000);
      await stored(shortLived.credential, scout, inst, data);
      const next = await mint();
      expectStatus(await initiate(main.url, next.credential, metaFor(scout, inst, randomBytes(300))), 409);

      for (const s of stations) s.advanceClock(DAY_MS + 60_000);
      expectStatus(
        await initiate(main.url, shortLived.credential, metaFor(scout, inst, randomBytes(300))),
        401,
      );
      expectStatus(
        await initiate(station(1).url, next.credential, metaFor(scout, inst, randomBytes(300))),
        200,
        'the expired binding does not block',
      );
      const res = await latest(main.url, next.credential, scout, inst);
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(data));
    });
  });
}
