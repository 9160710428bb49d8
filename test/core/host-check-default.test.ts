// Without ALLOWED_HOSTS (the default), a Host that is not an IP address, localhost or one of
// this machine's own names is 403 `host_not_allowed` (issue #23 item 5: DNS rebinding). Before,
// a page at attacker.example that rebound its name to the server signed in with the initial
// password (200). Requests with a bearer token on token routes, and /health, pass for any
// name (Scouts, scripts, Prometheus, load balancers). Both roles.
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { bothRoles } from '../helpers/both-roles.ts';
import { adminClient, INITIAL_PASSWORD, mintAutomationToken } from '../helpers/http.ts';
import { type LogLine, logLine, logLines } from '../helpers/log-lines.ts';
import type { TestServer } from '../helpers/server.ts';
import { withHost } from '../helpers/with-host.ts';

const ADVERTISED = 'scout-7.example';
const servers = bothRoles({ scout: { env: { ADVERTISED_URL: `http://${ADVERTISED}:6556` } } });

for (const role of ['station', 'scout'] as const) {
  describe(`${role} without ALLOWED_HOSTS`, () => {
    const server = () => servers[role] as TestServer;
    const attacker = () => `attacker.example:${server().port}`;
    const origin = () => ({ origin: `http://${attacker()}` });
    const login = { username: 'admin', password: INITIAL_PASSWORD };

    test('a rebinding page (its own Host and Origin) cannot sign in with the initial password', async () => {
      const reply = await withHost(server(), attacker(), 'POST', '/api/session/login', {
        body: login,
        headers: origin(),
      });
      assert.equal(reply.status, 403, reply.text);
      const body = JSON.parse(reply.text);
      assert.equal(body.code, 'host_not_allowed');
      assert.ok(body.detail.includes('ALLOWED_HOSTS=attacker.example'), body.detail);
      assert.deepEqual(reply.setCookie, [], 'no session is made');
    });

    test('every other route is refused too: the web UI, the API, metrics, /backup', async () => {
      for (const path of [
        '/',
        '/index.html',
        '/api/session/me',
        '/api/users',
        '/metrics',
        '/backup/uploads/initiate',
      ]) {
        const reply = await withHost(server(), attacker(), 'GET', path, { headers: origin() });
        assert.equal(reply.status, 403, `${path}: ${reply.text}`);
        assert.equal(JSON.parse(reply.text).code, 'host_not_allowed', path);
      }
      // A bearer token widens only the token routes, never the UI.
      const ui = await withHost(server(), attacker(), 'GET', '/', { headers: { authorization: 'Bearer x' } });
      assert.equal(ui.status, 403, ui.text);
    });

    test('a browser gets an HTML page that says how to allow the name', async () => {
      const page = await withHost(server(), attacker(), 'GET', '/', {
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      assert.equal(page.status, 403);
      assert.match(page.contentType, /^text\/html/);
      assert.ok(page.text.includes('ALLOWED_HOSTS=attacker.example'), page.text);
      assert.ok(page.text.includes('host_not_allowed'));
    });

    test('the first refusal of a name is a warning in the log', async () => {
      const about = (line: LogLine) =>
        line.msg.includes('refused a request for the host name attacker.example');
      const entry = await logLine(server(), about);
      assert.equal(entry.level, 40);
      assert.equal(entry.client, '127.0.0.1');
      assert.equal(logLines(server()).filter(about).length, 1, 'once per name');
    });

    test('/health answers whatever the Host (load balancers, monitoring)', async () => {
      const reply = await withHost(server(), attacker(), 'GET', '/health');
      assert.equal(reply.status, 200, reply.text);
    });

    test('IP addresses, localhost, *.localhost and this machine’s own names pass', async () => {
      const port = server().port;
      const name = hostname().toLowerCase();
      const short = name.split('.')[0];
      const hosts = [
        `127.0.0.1:${port}`,
        '10.1.2.3',
        `[::1]:${port}`,
        `localhost:${port}`,
        'app.localhost',
        name,
        name.toUpperCase(),
        `${name}.:${port}`,
        `${short}:${port}`,
        `${short}.local`,
        ...(role === 'scout' ? [`${ADVERTISED}:6556`] : []),
      ];
      for (const host of hosts) {
        const reply = await withHost(server(), host, 'GET', '/api/users');
        assert.equal(
          reply.status,
          401,
          `${host} should reach the route (401 without a session): ${reply.text}`,
        );
      }
    });

    test('a failed sign-in is a warning with the client address and Host', async () => {
      const host = `localhost:${server().port}`;
      const wrong = await withHost(server(), host, 'POST', '/api/session/login', {
        body: { username: 'admin', password: 'a-wrong-guess' },
      });
      assert.equal(wrong.status, 401, wrong.text);
      const entry = await logLine(server(), (line) => line.msg === 'failed sign-in' && line.host === host);
      assert.equal(entry.level, 40);
      assert.equal(entry.client, '127.0.0.1');
      assert.equal(entry.host, host);
      assert.ok(!JSON.stringify(entry).includes('a-wrong-guess'));
    });

    test('with a bearer token, Scouts, scripts and Prometheus reach token routes by any name', async () => {
      const junk = await withHost(server(), attacker(), 'GET', '/api/users', {
        headers: { authorization: 'Bearer not-a-token' },
      });
      assert.equal(junk.status, 401, `reaches the token check: ${junk.text}`);
      // A made-up token does not open the sign-in to a rebinding page: the token is checked first.
      const signIn = await withHost(server(), attacker(), 'POST', '/api/session/login', {
        body: login,
        headers: { ...origin(), authorization: 'Bearer made-up' },
      });
      assert.equal(signIn.status, 401, signIn.text);
      assert.deepEqual(signIn.setCookie, []);
      const token = await mintAutomationToken(await adminClient(server().url), ['read']);
      const metrics = await withHost(server(), 'backup.example.org', 'GET', '/metrics', {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(metrics.status, 200, metrics.text);
      if (role === 'station') {
        const backup = await withHost(
          server(),
          'backup.example.org',
          'GET',
          '/backup/recovery/a/b/requests',
          {
            headers: { authorization: 'Bearer not-a-token' },
          },
        );
        assert.equal(backup.status, 401, `reaches the Station token check: ${backup.text}`);
      }
    });
  });
}
