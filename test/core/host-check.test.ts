// ALLOWED_HOSTS: with a list set, a request for any other Host is 403 `host_not_allowed`, so a
// page that rebinds its own DNS name to the server's address cannot sign in with the initial
// password. /health answers for any host (load balancers probe by address). Both roles.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bothRoles } from '../helpers/both-roles.ts';
import { INITIAL_PASSWORD } from '../helpers/http.ts';
import type { TestServer } from '../helpers/server.ts';
import { withHost } from '../helpers/with-host.ts';

const ALLOWED = 'backup.example.com, localhost:1234, [::1]';

const env = { ALLOWED_HOSTS: ALLOWED };
const servers = bothRoles({ station: { env }, scout: { env } });

for (const role of ['station', 'scout'] as const) {
  describe(`${role} with ALLOWED_HOSTS`, () => {
    const server = () => servers[role] as TestServer;
    const login = { username: 'admin', password: INITIAL_PASSWORD };

    test('a rebinding page (another Host) cannot sign in with the initial password', async () => {
      for (const host of ['evil.example', `evil.example:${server().port}`, `127.0.0.1:${server().port}`]) {
        const reply = await withHost(server(), host, 'POST', '/api/session/login', { body: login });
        assert.equal(reply.status, 403, `${host}: ${reply.text}`);
        const body = JSON.parse(reply.text);
        assert.equal(body.code, 'host_not_allowed');
        assert.match(body.detail, /ALLOWED_HOSTS/);
        assert.ok(body.detail.includes(host), body.detail);
        assert.deepEqual(reply.setCookie, [], 'no session is made');
      }
    });

    test('other routes and the web UI are refused too; a missing Host as well', async () => {
      for (const path of ['/api/session/me', '/', '/backup/restore-notifications', '/metrics']) {
        const reply = await withHost(server(), 'evil.example', 'GET', path);
        assert.equal(reply.status, 403, `${path}: ${reply.text}`);
      }
      const noHost = await withHost(server(), '', 'GET', '/api/session/me');
      assert.equal(noHost.status, 403, noHost.text);
      // A listed set is the whole list: a bearer token does not widen it (unlike the default).
      const token = await withHost(server(), 'evil.example', 'GET', '/api/users', {
        headers: { authorization: 'Bearer not-a-token' },
      });
      assert.equal(token.status, 403, token.text);
    });

    test('/health answers whatever the Host', async () => {
      const reply = await withHost(server(), '10.0.0.7', 'GET', '/health');
      assert.equal(reply.status, 200, reply.text);
    });

    test('listed names pass: any port when listed without one, case and a trailing dot ignored', async () => {
      for (const host of [
        'backup.example.com',
        `backup.example.com:${server().port}`,
        'BACKUP.Example.COM.',
        'localhost:1234',
        `[::1]:${server().port}`,
      ]) {
        const reply = await withHost(server(), host, 'GET', '/api/users');
        assert.equal(
          reply.status,
          401,
          `${host} should reach the route (401 without a session): ${reply.text}`,
        );
      }
      const wrongPort = await withHost(server(), `localhost:${server().port}`, 'GET', '/api/users');
      assert.equal(wrongPort.status, 403, `localhost is listed only with port 1234: ${wrongPort.text}`);
      const signedIn = await withHost(server(), 'backup.example.com', 'POST', '/api/session/login', {
        body: login,
      });
      assert.equal(signedIn.status, 200, signedIn.text);
    });
  });
}
