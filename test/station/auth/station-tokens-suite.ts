// Station tokens: mint, list, revoke, expiry, and binding a token to Scout instances
// (docs/protocol.md: Station tokens; docs/api.md: Station). Runs on PGlite and on PostgreSQL.
// One Station for the file; every test uses its own scout_id / instance names; the clock only
// moves forward.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { DAY_MS } from '../../../src/core/clock.ts';
import type { StationTokenView } from '../../../src/shared/protocol/station-tokens.ts';
import { assertError, expectIsoNear } from '../../helpers/assertions.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { Client } from '../../helpers/http.ts';
import { snapshotExists } from '../../helpers/station-store.ts';
import { call, finalize, initiate, putChunk } from '../../helpers/uploads.ts';
import {
  assertGoneOrRevoked,
  assertOk,
  instanceId,
  MAX_UPLOAD,
  rawRequest,
  STORED_NAME,
  type StartStation,
  unique,
  useStation,
} from '../uploads/uploads-kit.ts';

export function stationTokensSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'main', { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    const { mint, listEntry, requireEntry, store, meta, initiateAs } = ctx;

    describe('Station tokens', () => {
      test('mint: 201 with credential, ttl_days 365 by default, shared, max_registrations, message', async () => {
        const minted = await mint(ctx.admin, {});
        const { body } = minted;
        assert.equal(body.ttl_days, 365);
        assert.equal(body.shared, false);
        assert.ok('max_registrations' in body, `max_registrations in ${JSON.stringify(body)}`);
        assert.equal(typeof body.message, 'string');
        assert.ok(body.message.length > 0);
        assert.ok(body.credential.length >= 20, 'credential is a long secret');

        const entry = await listEntry(minted.hash);
        assert.ok(entry, 'the list has an entry whose token_hash is the SHA-256 hex of the credential');
        expectIsoNear(entry.created_at, ctx.now(), 5 * 60_000, 'created_at');
        expectIsoNear(entry.expires_at, ctx.now() + 365 * DAY_MS, 5 * 60_000, 'expires_at');
        assert.equal(entry.shared, false);

        // No body at all behaves like {}.
        const bare = await ctx.admin.request('POST', '/api/credentials/mint');
        assertOk(bare, 201);
        ctx.credentials.add(bare.body.credential);
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
          const reply = await ctx.admin.post(`/api/credentials/mint${c.query}`, c.body);
          assertOk(reply, 201);
          ctx.credentials.add(reply.body.credential);
          assert.equal(reply.body.ttl_days, c.ttl, `${c.query} ${JSON.stringify(c.body)}`);
          const entry = await listEntry(sha256(reply.body.credential));
          expectIsoNear(
            entry?.expires_at,
            ctx.now() + c.ttl * DAY_MS,
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
        const before = (await ctx.admin.get('/api/credentials')).body.credentials.length;
        for (const c of refused) {
          assertError(await ctx.admin.post(`/api/credentials/mint${c.query}`, c.body), 400, /ttl_days/);
        }
        const afterwards = (await ctx.admin.get('/api/credentials')).body.credentials.length;
        assert.equal(afterwards, before, 'a refused mint creates no token');
      });

      test('mint shared: max_registrations from 2 to 10000', async () => {
        for (const max of [2, 10_000]) {
          const { body, hash } = await mint(ctx.admin, { shared: true, max_registrations: max });
          assert.equal(body.shared, true);
          assert.equal(body.max_registrations, max);
          const entry = await requireEntry(hash);
          assert.equal(entry.shared, true);
          assert.equal(entry.max_registrations, max);
        }
        for (const max of [1, 10_001, 0]) {
          assertError(
            await ctx.admin.post('/api/credentials/mint', { shared: true, max_registrations: max }),
            400,
            /max_registrations/,
          );
        }
        assertError(await ctx.admin.post('/api/credentials/mint', { shared: 'yes' }), 400, /shared/);
      });

      test('the credentials list holds metadata only, never a credential', async () => {
        const minted = await mint(ctx.admin, { shared: true, max_registrations: 3 });
        const list = await ctx.admin.get('/api/credentials');
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
        for (const secret of ctx.credentials) {
          assert.ok(!list.text.includes(secret), 'a minted credential appears in the list');
          // A JWT-like token must not leak through any of its parts either.
          const signature = secret.split('.').pop() ?? secret;
          if (signature.length >= 16)
            assert.ok(!list.text.includes(signature), 'credential signature leaked');
        }
        const entry = (list.body.credentials as StationTokenView[]).find((c) => c.token_hash === minted.hash);
        assert.ok(entry, 'the new token is listed by sha256(credential)');
        assert.equal(entry.max_registrations, 3);
      });

      test('token management needs an admin: 401 signed out, 403 for a non-admin', async () => {
        const anonymous = new Client(ctx.station.url);
        assertError(await anonymous.get('/api/credentials'), 401);
        assertError(await anonymous.post('/api/credentials/mint', {}), 401);

        const username = unique('operator');
        const initial = `${username}-initial`;
        const password = `${username}-password`;
        assertOk(await ctx.admin.post('/api/users', { username, password: initial, is_admin: false }), 201);
        const user = new Client(ctx.station.url);
        assertOk(await user.login(username, initial));
        assertOk(
          await user.post('/api/session/change-password', {
            current_password: initial,
            new_password: password,
            confirm_new_password: password,
          }),
        );
        const { hash } = await mint(ctx.admin, {});
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
        const { credential } = await mint(ctx.admin, {});
        const bearer = new Client(ctx.station.url);
        assertError(await bearer.get('/api/overview', { token: credential }), 401);
        assertError(await bearer.get('/api/credentials', { token: credential }), 401);
        assertError(await bearer.post('/api/credentials/mint', {}, { token: credential }), 401);

        const data = randomBytes(1000);
        const body = meta(data, { scout_id: unique('cookie'), scout_instance_id: instanceId() });
        // The admin's session cookie is sent, but no Station token.
        assertError(await ctx.admin.post('/backup/uploads/initiate', body), 401);
        assertError(await ctx.admin.put('/backup/uploads/whatever/chunk?offset=0', {}), 401);
        assertError(await ctx.admin.post('/backup/uploads/whatever/finalize'), 401);
        assertError(await initiate(ctx.station.url, 'not-a-token', body), 401);
        assertError(
          await rawRequest(
            ctx.station.url,
            'POST',
            '/backup/uploads/initiate',
            undefined,
            JSON.stringify(body),
          ),
          401,
        );
        // The token itself works.
        assertOk(await initiate(ctx.station.url, credential, body));
      });

      test('revoke by token_hash: the token is 401 on /backup, also for an upload in progress', async () => {
        const { credential, hash } = await mint(ctx.admin, {});
        const data = randomBytes(200_000);
        const m = meta(data, {
          scout_id: unique('revoke'),
          scout_instance_id: instanceId(),
          job_name: 'docs',
        });
        const started = await initiate(ctx.station.url, credential, m);
        assertOk(started);
        assertOk(
          await putChunk(ctx.station.url, credential, started.body.upload_id, 0, data.subarray(0, 50_000)),
        );

        const revoked = await ctx.admin.delete(`/api/credentials/${hash}`);
        assertOk(revoked);
        assertGoneOrRevoked(await listEntry(hash));

        assertError(await initiate(ctx.station.url, credential, m), 401);
        assertError(
          await putChunk(ctx.station.url, credential, started.body.upload_id, 50_000, data.subarray(50_000)),
          401,
        );
        assertError(await finalize(ctx.station.url, credential, started.body.upload_id), 401);
        assertError(
          await call(
            ctx.station.url,
            'GET',
            `/backup/recovery/${m.scout_id}/${m.scout_instance_id}/docs/latest`,
            credential,
          ),
          401,
        );

        // An unused token can be revoked too.
        const unused = await mint(ctx.admin, {});
        assertOk(await ctx.admin.delete(`/api/credentials/${unused.hash}`));
        assertError(
          await initiate(ctx.station.url, unused.credential, meta(data, { scout_id: unique('revoke') })),
          401,
        );
        assertError(await ctx.admin.delete(`/api/credentials/${'0'.repeat(64)}`), 404);
        assertError(await ctx.admin.delete('/api/credentials/not-a-hash'), 400);
      });

      test('revoking a shared token by hash stops it for every instance', async () => {
        const { credential, hash } = await mint(ctx.admin, { shared: true, max_registrations: 5 });
        const scout = unique('shared-revoke');
        const instances = [instanceId(), instanceId(), instanceId()];
        for (const inst of instances) {
          assertOk(await initiateAs(credential, scout, inst));
        }
        assertOk(await ctx.admin.delete(`/api/credentials/${hash}`));
        for (const inst of instances) {
          assertError(await initiateAs(credential, scout, inst), 401);
        }
      });

      test('revoke by instance returns revoked_rows and affected_instances', async () => {
        const scout = unique('instance-revoke');
        // A normal token bound to one instance.
        const single = await mint(ctx.admin, {});
        const a = instanceId();
        assertOk(await initiateAs(single.credential, scout, a));
        const one = await ctx.admin.delete(`/api/credentials/instances/${scout}/${a}`);
        assertOk(one);
        assert.equal(one.body.revoked_rows, 1, one.text);
        assert.equal(one.body.affected_instances, 1, one.text);
        assertError(await initiateAs(single.credential, scout, a), 401);

        // A shared token bound to two instances: revoking through one stops both.
        const shared = await mint(ctx.admin, { shared: true, max_registrations: 4 });
        const b1 = instanceId();
        const b2 = instanceId();
        for (const inst of [b1, b2]) {
          assertOk(await initiateAs(shared.credential, scout, inst));
        }
        const both = await ctx.admin.delete(`/api/credentials/instances/${scout}/${b1}`);
        assertOk(both);
        assert.equal(both.body.revoked_rows, 1, both.text);
        assert.equal(both.body.affected_instances, 2, both.text);
        for (const inst of [b1, b2]) {
          assertError(await initiateAs(shared.credential, scout, inst), 401);
        }
        assertGoneOrRevoked(await listEntry(shared.hash));

        // Nothing bound: nothing revoked.
        const none = await ctx.admin.delete(`/api/credentials/instances/${scout}/${instanceId()}`);
        if (none.status === 200) {
          assert.equal(none.body.revoked_rows, 0, none.text);
          assert.equal(none.body.affected_instances, 0, none.text);
        } else {
          assertError(none, 404);
        }
        assertError(
          await ctx.admin.delete(`/api/credentials/instances/${scout}/.hidden`),
          400,
          /scout_instance_id/,
        );
      });

      test('an expired Station token is 401', async () => {
        const { credential, hash } = await mint(ctx.admin, { ttl_days: 1 });
        const m = () =>
          meta(randomBytes(500), { scout_id: 'expiry-scout', scout_instance_id: 'expiry0000000001' });
        assertOk(await initiate(ctx.station.url, credential, m()));
        ctx.station.advanceClock(DAY_MS - 10 * 60_000);
        ctx.offset += DAY_MS - 10 * 60_000;
        assertOk(await initiate(ctx.station.url, credential, m()), 'still valid ten minutes before expiry');
        ctx.station.advanceClock(20 * 60_000);
        ctx.offset += 20 * 60_000;
        assertError(await initiate(ctx.station.url, credential, m()), 401);
        const entry = await listEntry(hash);
        if (entry) assert.ok(Date.parse(entry.expires_at) <= ctx.now(), 'expires_at is in the past');
      });
    });

    // ------------------------------------------------------------------ binding

    describe('token binding', () => {
      test('a normal token binds the first instance; another instance is 409', async () => {
        const { credential, hash } = await mint(ctx.admin, {});
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
        const { credential, hash } = await mint(ctx.admin, { shared: true, max_registrations: 5 });
        const scout = unique('race');
        const instances = Array.from({ length: 20 }, () => instanceId());
        const replies = await Promise.all(
          instances.map((inst) =>
            initiate(
              ctx.station.url,
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
        const { credential, hash } = await mint(ctx.admin, {});
        const scout = unique('delete-inst');
        const inst = instanceId();
        const data = randomBytes(100_000);
        const m = meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' });
        const stored = await store(ctx.station.url, credential, data, m);
        const at = { scout, instance: inst, job: 'docs' };
        assert.ok(await snapshotExists(ctx.station, at, stored.stored_as), 'stored');

        const deleted = await ctx.admin.delete(`/api/instances/${scout}/${inst}`);
        assertOk(deleted);
        assert.equal(
          await snapshotExists(ctx.station, at, stored.stored_as),
          false,
          'the snapshots are gone',
        );
        assert.ok(await listEntry(hash), 'the token is still listed');

        const again = randomBytes(100_000);
        const restored = await store(
          ctx.station.url,
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
  });
}
