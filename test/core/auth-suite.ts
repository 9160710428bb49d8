// The sign-in, account and automation-token rules both roles share (docs/api.md: Sign-in and
// access, Both roles). One server per suite; the tests run in order and share its state: the
// admin, the accounts made along the way, and the server clock, which only moves forward.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../src/core/clock.ts';
import { assertError, expectIsoNear } from '../helpers/assertions.ts';
import { sha256 } from '../helpers/hashes.ts';
import { Client, type Reply } from '../helpers/http.ts';
import type { TestServer } from '../helpers/server.ts';

const MINUTE_MS = 60 * 1000;
const INITIAL_PASSWORD = 'admin';
const ADMIN_PASSWORD = 'auth-suite admin password';

export type StartServer = (opts?: { dataDir?: string }) => Promise<TestServer>;

function assertOk(reply: Reply, status = 200): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
}

interface UserJson {
  id: string;
  username: string;
  is_admin: boolean;
  must_change_password: boolean;
}

interface TokenJson {
  id: string;
  name: string;
  expired?: boolean;
  token?: unknown;
}

/** A user record is exactly `{id, username, is_admin, must_change_password}` (no hash, no password). */
function assertUserRecord(
  value: unknown,
  expected: { username?: string; is_admin?: boolean; must_change_password?: boolean; id?: string },
): void {
  assert.ok(value && typeof value === 'object', `user record: ${JSON.stringify(value)}`);
  const user = value as Record<string, unknown> & UserJson;
  assert.equal(typeof user.id, 'string');
  assert.ok(user.id.length > 0);
  assert.equal(typeof user.username, 'string');
  assert.equal(typeof user.is_admin, 'boolean');
  assert.equal(typeof user.must_change_password, 'boolean');
  for (const key of Object.keys(user)) {
    assert.doesNotMatch(key, /password_hash|hash|secret|^password$/i, `user record leaks ${key}`);
  }
  for (const [key, value] of Object.entries(expected)) assert.equal(user[key], value, `user.${key}`);
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

export function authSuite(label: string, start: StartServer, cookieName: string): void {
  describe(label, () => {
    let server: TestServer;
    /** Output of server processes that were restarted (output() covers only the current one). */
    const earlierOutput: string[] = [];
    /** How far the suite has moved the server clock. */
    let clockOffset = 0;
    /** Secrets handed out during the run: none may show up in logs or on disk in clear. */
    const secrets = new Set<string>();

    let admin: Client;
    let adminId: string;

    const serverNow = () => Date.now() + clockOffset;
    const advance = (ms: number) => {
      server.advanceClock(ms);
      clockOffset += ms;
    };
    const logs = () => earlierOutput.join('') + server.output();
    const remember = (client: Client) => {
      const value = client.cookie(cookieName);
      if (value) secrets.add(value);
    };

    async function signIn(username: string, password: string): Promise<Client> {
      const client = new Client(server.url);
      const reply = await client.login(username, password);
      assertOk(reply);
      assert.ok(client.cookie(cookieName), `sign-in sets ${cookieName}`);
      remember(client);
      return client;
    }

    async function changePassword(client: Client, current: string, next: string): Promise<Reply> {
      return client.post('/api/session/change-password', {
        current_password: current,
        new_password: next,
        confirm_new_password: next,
      });
    }

    /** Creates an account through the admin, signs it in and completes its first password change. */
    async function account(username: string, isAdmin: boolean) {
      const initial = `${username}-initial-pw`;
      const password = `${username}-own-password`;
      const created = await admin.post('/api/users', { username, password: initial, is_admin: isAdmin });
      assertOk(created, 201);
      const id: string = created.body.user.id;
      const client = await signIn(username, initial);
      assertOk(await changePassword(client, initial, password));
      return { id, client, password };
    }

    async function me(client: Client, token?: string): Promise<Reply> {
      return client.get('/api/session/me', token ? { token } : {});
    }

    async function assertSignedOut(client: Client): Promise<void> {
      const info = await me(client);
      assertOk(info);
      assert.equal(info.body.authenticated, false, `signed out: ${info.text}`);
      assert.equal(info.body.user, null);
      assertError(await client.get('/api/users'), 401);
    }

    async function mint(client: Client, body: Record<string, unknown>): Promise<Reply> {
      const reply = await client.post('/api/automation-tokens', body);
      if (reply.status === 201 && typeof reply.body.token === 'string') secrets.add(reply.body.token);
      return reply;
    }

    before(async () => {
      server = await start();
    });

    after(async () => {
      await server?.dispose();
    });

    // ---------------------------------------------------------------- sessions

    test('sign-in sets the HttpOnly, SameSite session cookie and returns the user record', async () => {
      const client = new Client(server.url);
      const reply = await client.login('admin', INITIAL_PASSWORD);
      assertOk(reply);
      assert.equal(reply.body.status, 'ok');
      assertUserRecord(reply.body.user, { username: 'admin', is_admin: true, must_change_password: true });
      adminId = reply.body.user.id;
      assert.doesNotMatch(reply.text, /scrypt|\$/, 'no password hash in the reply');

      const setCookies = reply.headers.getSetCookie();
      const line = setCookies.find((l) => l.startsWith(`${cookieName}=`));
      assert.ok(line, `Set-Cookie names ${cookieName}: ${JSON.stringify(setCookies)}`);
      assert.match(line, /;\s*HttpOnly/i);
      assert.match(line, /;\s*SameSite=(Lax|Strict)/i);
      assert.match(line, /;\s*Path=\/(;|$)/i);
      const value = client.cookie(cookieName);
      assert.ok(value && value.length >= 20, 'session id is long and random');
      remember(client);

      const info = await me(client);
      assertOk(info);
      assert.equal(info.body.authenticated, true);
      assertUserRecord(info.body.user, { id: adminId, username: 'admin', must_change_password: true });
      assert.equal(info.body.automation_token, undefined, 'no automation_token for a cookie session');
      admin = client;
    });

    test('signed out, GET /api/session/me says so and protected routes are 401', async () => {
      const anonymous = new Client(server.url);
      await assertSignedOut(anonymous);
      assertError(await anonymous.get('/api/automation-tokens'), 401);
      assertError(await anonymous.post('/api/session/logout-all'), 401);
      assertError(
        await anonymous.post('/api/session/change-password', {
          current_password: 'x',
          new_password: 'yyyyyyyy',
          confirm_new_password: 'yyyyyyyy',
        }),
        401,
      );
    });

    test('wrong sign-in details are 401 and set no cookie; malformed bodies are 400', async () => {
      const client = new Client(server.url);
      const wrong = await client.login('admin', 'not the password');
      assertError(wrong, 401);
      assert.equal(
        wrong.headers.getSetCookie().some((l) => l.startsWith(`${cookieName}=`) && !/max-age=0/i.test(l)),
        false,
      );
      assert.equal(client.cookie(cookieName), undefined);

      assertError(await client.login('nobody-here', 'whatever-password'), 401);
      assertError(await client.post('/api/session/login', undefined, { raw: '{"username": "admin",' }), 400);
      assertError(await client.post('/api/session/login', { username: 'admin' }), 400, /password/);
    });

    test('until the first admin changes the password, only the session routes work', async () => {
      const users = await admin.get('/api/users');
      assertError(users, 403, /password/i);
      assert.equal(users.body.code, 'password_change_required');
      assertError(
        await admin.post('/api/users', { username: 'x1', password: 'long-enough-pw' }),
        403,
        /password/i,
      );
      assertError(await admin.get('/api/automation-tokens'), 403, /password/i);
      assertError(await mint(admin, { name: 'early', scopes: ['read'] }), 403, /password/i);
      assertError(await admin.put(`/api/users/${adminId}`, { username: 'admin2' }), 403, /password/i);
      assertError(await admin.delete(`/api/users/${adminId}`), 403, /password/i);

      const info = await me(admin);
      assertOk(info);
      assert.equal(info.body.authenticated, true);
      assert.equal(info.body.user.must_change_password, true);
    });

    test('change-password refuses a wrong current password, a mismatch and a short password', async () => {
      assertError(await changePassword(admin, 'not-the-current-pw', ADMIN_PASSWORD), 400, /current/i);
      assertError(
        await admin.post('/api/session/change-password', {
          current_password: INITIAL_PASSWORD,
          new_password: ADMIN_PASSWORD,
          confirm_new_password: `${ADMIN_PASSWORD}!`,
        }),
        400,
        /confirm|match|differ/i,
      );
      assertError(await changePassword(admin, INITIAL_PASSWORD, 'short7c'), 400, /8/);
      assertError(
        await admin.post('/api/session/change-password', { current_password: INITIAL_PASSWORD }),
        400,
        /new_password|confirm/i,
      );
      assertError(await admin.post('/api/session/change-password', undefined, { raw: 'nope' }), 400, /JSON/i);
      const info = await me(admin);
      assert.equal(info.body.user.must_change_password, true, 'nothing changed yet');
    });

    test("changing the password ends the account's other sessions and keeps the calling one", async () => {
      const other = await signIn('admin', INITIAL_PASSWORD);
      assert.equal((await me(other)).body.authenticated, true);

      const changed = await changePassword(admin, INITIAL_PASSWORD, ADMIN_PASSWORD);
      assertOk(changed);
      assert.equal(changed.body.status, 'ok');
      assertUserRecord(changed.body.user, { id: adminId, must_change_password: false });

      const info = await me(admin);
      assert.equal(info.body.authenticated, true);
      assert.equal(info.body.user.must_change_password, false);
      const users = await admin.get('/api/users');
      assertOk(users);

      await assertSignedOut(other);

      // The old password is gone, the new one signs in without a pending change.
      assertError(await new Client(server.url).login('admin', INITIAL_PASSWORD), 401);
      const fresh = new Client(server.url);
      const again = await fresh.login('admin', ADMIN_PASSWORD);
      assertOk(again);
      assert.equal(again.body.user.must_change_password, false);
      remember(fresh);
    });

    test('change-password refuses a new password equal to the current one', async () => {
      assertError(await changePassword(admin, ADMIN_PASSWORD, ADMIN_PASSWORD), 400, /differ|same|current/i);
      assertOk(await admin.get('/api/users'));
    });

    test('logout deletes the current session; the old cookie stops working even if sent again', async () => {
      const client = await signIn('admin', ADMIN_PASSWORD);
      const value = client.cookie(cookieName) as string;
      const out = await client.post('/api/session/logout');
      assertOk(out);
      assert.equal(out.body.status, 'ok');
      const cleared = out.headers.getSetCookie().find((l) => l.startsWith(`${cookieName}=`));
      assert.ok(cleared, 'logout clears the cookie');
      assert.match(cleared, /max-age=0|expires=thu, 01 jan 1970/i);
      assert.equal(client.cookie(cookieName), undefined);

      const replay = new Client(server.url);
      replay.setCookie(cookieName, value);
      await assertSignedOut(replay);

      // Public without a session; the account's other sessions carry on.
      assertOk(await new Client(server.url).post('/api/session/logout'));
      assertOk(await admin.get('/api/users'));
    });

    test('browser writes from another origin are 403; same-origin and header-less writes pass', async () => {
      const client = new Client(server.url);
      const foreign = await client.post(
        '/api/session/login',
        { username: 'admin', password: ADMIN_PASSWORD },
        { headers: { origin: 'http://evil.example' } },
      );
      assertError(foreign, 403, /origin/i);
      assert.equal(client.cookie(cookieName), undefined);
      assertError(
        await admin.post('/api/session/logout-all', undefined, {
          headers: { 'sec-fetch-site': 'cross-site' },
        }),
        403,
        /origin/i,
      );
      assertOk(await admin.get('/api/users', { headers: { origin: 'http://evil.example' } }));
      const same = await client.post(
        '/api/session/login',
        { username: 'admin', password: ADMIN_PASSWORD },
        { headers: { origin: server.url, 'sec-fetch-site': 'same-origin' } },
      );
      assertOk(same);
      remember(client);
      assertOk(await admin.get('/api/users'), 200);
    });

    // ---------------------------------------------------------------- accounts

    let alice: { id: string; client: Client; password: string };

    test('GET /api/users returns users and build; POST creates accounts that must change password', async () => {
      const list = await admin.get('/api/users');
      assertOk(list);
      assert.ok(Array.isArray(list.body.users));
      assert.ok(list.body.build !== undefined && list.body.build !== null, `build present: ${list.text}`);
      const self = list.body.users.find((u: UserJson) => u.id === adminId);
      assertUserRecord(self, { username: 'admin', is_admin: true, must_change_password: false });

      const created = await admin.post('/api/users', {
        username: 'alice',
        password: 'alice-initial-pw',
        is_admin: false,
      });
      assertOk(created, 201);
      assertUserRecord(created.body.user, { username: 'alice', is_admin: false, must_change_password: true });
      assert.doesNotMatch(created.text, /alice-initial-pw/);
      const id: string = created.body.user.id;
      assert.notEqual(id, adminId);

      const after = await admin.get('/api/users');
      const listed = after.body.users.find((u: UserJson) => u.id === id);
      assertUserRecord(listed, { username: 'alice', is_admin: false, must_change_password: true });
      assert.doesNotMatch(after.text, /alice-initial-pw|scrypt/);

      const client = await signIn('alice', 'alice-initial-pw');
      assertError(await client.get('/api/users'), 403, /password/i);
      assertOk(await changePassword(client, 'alice-initial-pw', 'alice-own-password'));
      alice = { id, client, password: 'alice-own-password' };
    });

    test('account creation refuses duplicates (409), short passwords and bad usernames (400)', async () => {
      assertError(
        await admin.post('/api/users', { username: 'alice', password: 'another-long-pw', is_admin: false }),
        409,
        /alice|exists/i,
      );
      assertError(await admin.post('/api/users', { username: 'shorty', password: 'seven77' }), 400, /8/);
      for (const username of ['', 'has space', '../escape', 'a/b', 'x'.repeat(65)]) {
        assertError(
          await admin.post('/api/users', { username, password: 'long-enough-pw' }),
          400,
          /username/i,
        );
      }
      assertError(await admin.post('/api/users', { username: 'nopass' }), 400, /password/i);
      const eight = await admin.post('/api/users', { username: 'eight', password: '12345678' });
      assertOk(eight, 201);
      assertUserRecord(eight.body.user, { username: 'eight', is_admin: false, must_change_password: true });
      assertError(await admin.post('/api/users', undefined, { raw: '{' }), 400, /JSON/i);
      const list = await admin.get('/api/users');
      const names = list.body.users.map((u: UserJson) => u.username);
      for (const name of ['shorty', 'nopass', 'has space']) assert.ok(!names.includes(name), name);
    });

    test('a non-admin sees only their own account and cannot manage accounts', async () => {
      const list = await alice.client.get('/api/users');
      assertOk(list);
      assert.ok(list.body.build !== undefined && list.body.build !== null);
      assert.equal(list.body.users.length, 1);
      assertUserRecord(list.body.users[0], { id: alice.id, username: 'alice', is_admin: false });

      assertError(
        await alice.client.post('/api/users', { username: 'mallory', password: 'mallory-pw-123' }),
        403,
        /admin/i,
      );
      assertError(await alice.client.delete(`/api/users/${adminId}`), 403, /admin/i);
      assertError(await alice.client.delete(`/api/users/${alice.id}`), 403, /admin/i);
      assertError(await alice.client.put(`/api/users/${adminId}`, { username: 'pwned' }), 403, /admin/i);
      assertError(
        await alice.client.put(`/api/users/${adminId}`, { password: 'reset-by-alice' }),
        403,
        /admin/i,
      );
      assertError(await alice.client.put(`/api/users/${alice.id}`, { is_admin: true }), 403, /admin/i);

      const info = await me(admin);
      assert.equal(info.body.user.username, 'admin', 'the admin account is untouched');
      assert.equal((await me(alice.client)).body.user.is_admin, false);
    });

    test('an account may rename itself, but its own password goes through change-password', async () => {
      const renamed = await alice.client.put(`/api/users/${alice.id}`, { username: 'alice.renamed' });
      assertOk(renamed);
      assertUserRecord(renamed.body.user, { id: alice.id, username: 'alice.renamed', is_admin: false });
      assert.equal((await me(alice.client)).body.user.username, 'alice.renamed');
      assertOk(await new Client(server.url).login('alice.renamed', alice.password));

      assertError(
        await alice.client.put(`/api/users/${alice.id}`, { username: 'admin' }),
        409,
        /admin|exists/i,
      );
      assertError(
        await alice.client.put(`/api/users/${alice.id}`, { username: 'bad name' }),
        400,
        /username/i,
      );
      assertError(
        await alice.client.put(`/api/users/${alice.id}`, { password: 'alice-new-password' }),
        400,
        /change-password/i,
      );
      assertError(
        await admin.put(`/api/users/${adminId}`, { password: 'admin-new-password' }),
        400,
        /change-password/i,
      );
      // Nothing changed: both still sign in with their passwords.
      assertOk(await new Client(server.url).login('alice.renamed', alice.password));
      assertOk(await new Client(server.url).login('admin', ADMIN_PASSWORD));
    });

    test("an admin resetting another account's password ends that account's sessions", async () => {
      const bob = await account('bob', false);
      const bobSecond = await signIn('bob', bob.password);

      assertError(await admin.put(`/api/users/${bob.id}`, { password: 'short' }), 400, /8/);
      assert.equal((await me(bob.client)).body.authenticated, true, 'a refused reset changes nothing');

      const reset = await admin.put(`/api/users/${bob.id}`, { password: 'bob-reset-password' });
      assertOk(reset);
      assertUserRecord(reset.body.user, { id: bob.id, username: 'bob', must_change_password: true });
      await assertSignedOut(bob.client);
      await assertSignedOut(bobSecond);

      const again = new Client(server.url);
      const login = await again.login('bob', 'bob-reset-password');
      assertOk(login);
      assert.equal(login.body.user.must_change_password, true);
      remember(again);
      assertError(await again.get('/api/users'), 403, /password/i);
      assertOk(await admin.get('/api/users'), 200);
    });

    test('the last admin can be neither deleted nor demoted, but can once another admin exists', async () => {
      const admins = (await admin.get('/api/users')).body.users.filter((u: UserJson) => u.is_admin);
      assert.deepEqual(
        admins.map((u: UserJson) => u.id),
        [adminId],
        'precondition: admin is the only admin',
      );
      assertError(await admin.delete(`/api/users/${adminId}`), 409, /admin/i);
      assertError(await admin.put(`/api/users/${adminId}`, { is_admin: false }), 409, /admin/i);
      assert.equal((await me(admin)).body.user.is_admin, true);
      assertOk(await admin.get('/api/users'));

      const dave = await account('dave', true);
      const demoted = await dave.client.put(`/api/users/${adminId}`, { is_admin: false });
      assertOk(demoted);
      assertUserRecord(demoted.body.user, { id: adminId, is_admin: false });
      assertError(
        await admin.post('/api/users', { username: 'x2', password: 'long-enough-pw' }),
        403,
        /admin/i,
      );
      // Now dave is the last admin.
      assertError(await dave.client.put(`/api/users/${dave.id}`, { is_admin: false }), 409, /admin/i);
      assertError(await dave.client.delete(`/api/users/${dave.id}`), 409, /admin/i);
      const promoted = await dave.client.put(`/api/users/${adminId}`, { is_admin: true });
      assertOk(promoted);
      assert.equal(promoted.body.user.is_admin, true);

      // With two admins, an admin account can be deleted.
      const deleted = await admin.delete(`/api/users/${dave.id}`);
      assertOk(deleted);
      await assertSignedOut(dave.client);
      assertError(await admin.delete(`/api/users/${adminId}`), 409, /admin/i);
    });

    test('DELETE removes the account and its sessions', async () => {
      const erin = await account('erin', false);
      const erinToo = await signIn('erin', erin.password);
      const deleted = await admin.delete(`/api/users/${erin.id}`);
      assertOk(deleted);
      await assertSignedOut(erin.client);
      await assertSignedOut(erinToo);
      const list = await admin.get('/api/users');
      assert.ok(!list.body.users.some((u: UserJson) => u.id === erin.id || u.username === 'erin'));
      assertError(await new Client(server.url).login('erin', erin.password), 401);
      assertError(await admin.delete(`/api/users/${erin.id}`), 404);
      assertError(await admin.put(`/api/users/${erin.id}`, { username: 'erin2' }), 404);
    });

    // ---------------------------------------------------------------- automation tokens

    let adminToken: string;
    let adminTokenId: string;

    test('creating an automation token returns the secret once, with metadata and a 90-day default', async () => {
      const created = await mint(admin, { name: 'ci', scopes: ['read', 'backup'] });
      assertOk(created, 201);
      assert.equal(typeof created.body.token, 'string');
      assert.ok(created.body.token.length >= 32, 'token is long');
      const meta = created.body.automation_token;
      assert.ok(meta && typeof meta.id === 'string' && meta.id.length > 0, `metadata id: ${created.text}`);
      assert.equal(meta.token, undefined);
      expectIsoNear(meta.expires_at, serverNow() + 90 * DAY_MS, 2 * MINUTE_MS, 'expires_at');
      adminToken = created.body.token;
      adminTokenId = meta.id;

      const list = await admin.get('/api/automation-tokens');
      assertOk(list);
      assert.ok(Array.isArray(list.body.tokens));
      const listed = list.body.tokens.find((t: TokenJson) => t.id === adminTokenId);
      assert.ok(listed, `token listed: ${list.text}`);
      assert.equal(listed.expired, false);
      assert.ok(!list.text.includes(adminToken), 'the list never holds the secret');
      assert.ok(!list.text.includes(sha256(adminToken)), 'nor its stored hash');
      for (const token of list.body.tokens) assert.equal(token.token, undefined);
    });

    test('ttl_days must be 1 to 3650 and scopes must be known', async () => {
      for (const ttl_days of [0, -1, 3651, 1.5, '30']) {
        assertError(await mint(admin, { name: 'bad ttl', scopes: ['read'], ttl_days }), 400, /ttl_days/);
      }
      assertError(await mint(admin, { name: 'bad scope', scopes: ['read', 'admin'] }), 400, /scope/);
      assertError(await mint(admin, { name: 'bad scope', scopes: 'read' }), 400, /scope/);
      assertError(await mint(admin, { name: 'no scopes' }), 400, /scope/);

      const longest = await mint(admin, { name: 'longest', scopes: ['manage'], ttl_days: 3650 });
      assertOk(longest, 201);
      expectIsoNear(
        longest.body.automation_token.expires_at,
        serverNow() + 3650 * DAY_MS,
        2 * MINUTE_MS,
        'max',
      );
      const shortest = await mint(admin, { name: 'shortest', scopes: ['restore'], ttl_days: 1 });
      assertOk(shortest, 201);
      expectIsoNear(shortest.body.automation_token.expires_at, serverNow() + DAY_MS, 2 * MINUTE_MS, 'min');

      const list = await admin.get('/api/automation-tokens');
      const names = list.body.tokens.map((t: TokenJson) => t.name);
      assert.ok(!names.includes('bad ttl') && !names.includes('bad scope'), 'refused tokens were not stored');
    });

    test('a token authenticates GET /api/session/me and reports its metadata', async () => {
      const info = await me(new Client(server.url), adminToken);
      assertOk(info);
      assert.equal(info.body.authenticated, true);
      assertUserRecord(info.body.user, { id: adminId, username: 'admin', is_admin: true });
      assert.equal(info.body.automation_token?.id, adminTokenId);
      assert.ok(!info.text.includes(adminToken), 'me never echoes the secret');
    });

    test('managing tokens needs an admin session cookie: not a token, not a non-admin', async () => {
      const manage = await mint(admin, { name: 'manager', scopes: ['manage', 'read', 'backup', 'restore'] });
      assertOk(manage, 201);
      const viaToken = new Client(server.url);
      const opts = { token: manage.body.token };
      assertError(
        await viaToken.post('/api/automation-tokens', { name: 'x', scopes: ['read'] }, opts),
        403,
        /token|sign in|session/i,
      );
      assertError(await viaToken.get('/api/automation-tokens', opts), 403, /token|sign in|session/i);
      assertError(await viaToken.delete(`/api/automation-tokens/${adminTokenId}`, opts), 403);
      // Nor the account and session controls.
      assertError(await viaToken.get('/api/users', opts), 403);
      assertError(await viaToken.post('/api/users', { username: 'tok', password: 'long-enough' }, opts), 403);
      assertError(await viaToken.post('/api/session/logout-all', undefined, opts), 403);
      assertError(
        await viaToken.post(
          '/api/session/change-password',
          {
            current_password: ADMIN_PASSWORD,
            new_password: 'something-else',
            confirm_new_password: 'something-else',
          },
          opts,
        ),
        403,
      );

      assertError(await mint(alice.client, { name: 'alice', scopes: ['read'] }), 403, /admin/i);
      assertError(await alice.client.get('/api/automation-tokens'), 403, /admin/i);
      assertError(await alice.client.delete(`/api/automation-tokens/${adminTokenId}`), 403, /admin/i);
      assertError(await new Client(server.url).get('/api/automation-tokens'), 401);

      // The admin's token still works after all that.
      assertOk(await me(new Client(server.url), adminToken));
    });

    test('an invalid bearer is 401 even when a valid session cookie is also sent', async () => {
      assertOk(await admin.get('/api/users'));
      assertError(await admin.get('/api/users', { token: 'bkd_at_not-a-real-token' }), 401);
      assertError(await admin.get('/api/session/me', { token: 'bkd_at_not-a-real-token' }), 401);
      assertError(await admin.get('/api/automation-tokens', { token: 'bkd_at_not-a-real-token' }), 401);
      assertError(
        await admin.get('/api/users', { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }),
        401,
      );
      assertOk(await admin.get('/api/users'), 200);
    });

    test('a revoked token is 401', async () => {
      const created = await mint(admin, { name: 'to revoke', scopes: ['read'] });
      assertOk(created, 201);
      const token: string = created.body.token;
      assertOk(await me(new Client(server.url), token));
      const revoked = await admin.delete(`/api/automation-tokens/${created.body.automation_token.id}`);
      assertOk(revoked);
      assertError(await me(new Client(server.url), token), 401, /token/i);
      assertError(await admin.delete(`/api/automation-tokens/${created.body.automation_token.id}`), 404);
      assertError(await admin.delete('/api/automation-tokens/no-such-token'), 404);
      assertOk(await me(new Client(server.url), adminToken), 200);
    });

    test('an expired token is still listed, marked expired, and is 401', async () => {
      const created = await mint(admin, { name: 'one day', scopes: ['read'], ttl_days: 1 });
      assertOk(created, 201);
      const token: string = created.body.token;
      const id: string = created.body.automation_token.id;
      assertOk(await me(new Client(server.url), token));

      advance(2 * DAY_MS);

      assertError(await me(new Client(server.url), token), 401, /token/i);
      const list = await admin.get('/api/automation-tokens');
      assertOk(list);
      const listed = list.body.tokens.find((t: TokenJson) => t.id === id);
      assert.ok(listed, `expired token still listed: ${list.text}`);
      assert.equal(listed.expired, true);
      assert.equal(list.body.tokens.find((t: TokenJson) => t.id === adminTokenId)?.expired, false);
      assert.ok(!list.text.includes(token));
      assertOk(await me(new Client(server.url), adminToken), 200);
    });

    test('a token stops working when its owner is demoted', async () => {
      const frank = await account('frank', true);
      const created = await mint(frank.client, { name: 'frank', scopes: ['manage'] });
      assertOk(created, 201);
      const token: string = created.body.token;
      assertOk(await me(new Client(server.url), token));

      assertOk(await admin.put(`/api/users/${frank.id}`, { is_admin: false }));
      assertError(await me(new Client(server.url), token), 401, /token|admin/i);
      // frank's session still works, as a non-admin.
      const info = await me(frank.client);
      assert.equal(info.body.user.is_admin, false);
      assertError(await frank.client.get('/api/automation-tokens'), 403, /admin/i);
    });

    test('a token stops working when its owner must change password', async () => {
      const gina = await account('gina', true);
      const created = await mint(gina.client, { name: 'gina', scopes: ['read'] });
      assertOk(created, 201);
      const token: string = created.body.token;
      assertOk(await me(new Client(server.url), token));

      assertOk(await admin.put(`/api/users/${gina.id}`, { password: 'gina-reset-password' }));
      assertError(await me(new Client(server.url), token), 401, /token|password/i);
      await assertSignedOut(gina.client);
    });

    test('logout-all ends every session of the account and no other', async () => {
      const first = await signIn('alice.renamed', alice.password);
      const second = await signIn('alice.renamed', alice.password);
      assertOk(await alice.client.get('/api/users'));

      const out = await first.post('/api/session/logout-all');
      assertOk(out);
      assert.equal(out.body.status, 'ok');
      assert.equal(first.cookie(cookieName), undefined, 'logout-all clears the cookie');
      await assertSignedOut(second);
      await assertSignedOut(alice.client);
      const replay = new Client(server.url);
      replay.setCookie(cookieName, second.cookie(cookieName) ?? 'gone');
      await assertSignedOut(replay);

      assertOk(await admin.get('/api/users'), 200);
      alice.client = await signIn('alice.renamed', alice.password);
    });

    // ---------------------------------------------------------------- persistence and secrets

    test('accounts, tokens and sessions survive a restart on the same data dir', async () => {
      const before = (await admin.get('/api/users')).body.users;
      const tokensBefore = (await admin.get('/api/automation-tokens')).body.tokens;

      earlierOutput.push(server.output());
      server = await server.restart();

      const info = await me(admin);
      assertOk(info);
      assert.equal(info.body.authenticated, true, 'the admin session is still valid');
      assert.equal((await me(alice.client)).body.user?.id, alice.id, "alice's session is still valid");

      const users = await admin.get('/api/users');
      assertOk(users);
      assert.deepEqual(users.body.users, before);
      const tokens = await admin.get('/api/automation-tokens');
      assert.deepEqual(
        tokens.body.tokens.map((t: TokenJson) => t.id).sort(),
        tokensBefore.map((t: TokenJson) => t.id).sort(),
      );

      const login = await new Client(server.url).login('alice.renamed', alice.password);
      assertOk(login);
      assertUserRecord(login.body.user, { id: alice.id, is_admin: false, must_change_password: false });
      const token = await me(new Client(server.url), adminToken);
      assertOk(token);
      assert.equal(token.body.automation_token.id, adminTokenId);
    });

    test('the data dir holds no token secret or session id in clear', async () => {
      assert.ok(secrets.size >= 5, `collected secrets: ${secrets.size}`);
      for (const file of filesUnder(server.dataDir)) {
        let bytes: Buffer;
        try {
          bytes = readFileSync(file);
        } catch {
          continue; // vanished or unreadable (lock files)
        }
        for (const secret of secrets) {
          assert.equal(bytes.includes(secret), false, `${file} holds a secret in clear`);
        }
      }
    });

    // ---------------------------------------------------------------- expiry (moves the clock 7 days)

    test('a session expires seven days after sign-in', async () => {
      const client = await signIn('alice.renamed', alice.password);
      advance(7 * DAY_MS - MINUTE_MS);
      assert.equal((await me(client)).body.authenticated, true, 'valid just before seven days');
      assertOk(await client.get('/api/users'));
      advance(2 * MINUTE_MS);
      await assertSignedOut(client);
      // A fresh sign-in works again.
      const fresh = await signIn('alice.renamed', alice.password);
      assertOk(await fresh.get('/api/users'));
    });

    test('failed sign-ins are limited: 10 per 15 minutes, then 429 with Retry-After', async () => {
      // Earlier failures in this file lie more than seven days back on the server clock.
      const client = new Client(server.url);
      for (let i = 0; i < 10; i++)
        assertError(await client.login('alice.renamed', `wrong-${i}-password`), 401);
      const limited = await client.login('alice.renamed', alice.password);
      assertError(limited, 429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900,
        `Retry-After ${retryAfter}`,
      );
      assert.equal(client.cookie(cookieName), undefined);
      assertError(await client.login('admin', ADMIN_PASSWORD), 429, /\d/);
      // Sessions are not affected, and the limit lifts once the failures age out.
      advance(15 * MINUTE_MS + 1000);
      assertOk(await client.login('alice.renamed', alice.password));
      remember(client);
    });

    test('no token secret, session id or password appears in the server log', async () => {
      const output = logs();
      assert.ok(output.length > 0, 'the server logged something');
      for (const secret of secrets) assert.ok(!output.includes(secret), 'a secret is in the log');
      for (const password of [ADMIN_PASSWORD, alice.password, 'alice-initial-pw', 'bob-reset-password']) {
        assert.ok(!output.includes(password), `password ${password} is in the log`);
      }
    });
  });
}
