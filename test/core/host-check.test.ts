// ALLOWED_HOSTS: with a list set, a request for any other Host is 403 `host_not_allowed`, so a
// page that rebinds its own DNS name to the server's address cannot sign in with the initial
// password. /health answers for any host (load balancers probe by address). Both roles.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { INITIAL_PASSWORD } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const ALLOWED = 'backup.example.com, localhost:1234, [::1]';

interface RawReply {
  status: number;
  text: string;
  setCookie: string[];
}

/** A request with a chosen Host header (fetch does not let us set one). */
function withHost(
  server: TestServer,
  host: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { host };
    if (payload)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text, setCookie: res.headers['set-cookie'] ?? [] }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const servers: Partial<Record<'station' | 'scout', TestServer>> = {};

before(async () => {
  const env = { ALLOWED_HOSTS: ALLOWED };
  const started = await Promise.allSettled([startServer('station', { env }), startServer('scout', { env })]);
  if (started[0].status === 'fulfilled') servers.station = started[0].value;
  if (started[1].status === 'fulfilled') servers.scout = started[1].value;
  for (const r of started) if (r.status === 'rejected') throw r.reason;
});

after(async () => {
  await Promise.all([servers.station?.dispose(), servers.scout?.dispose()]);
});

for (const role of ['station', 'scout'] as const) {
  describe(`${role} with ALLOWED_HOSTS`, () => {
    const server = () => servers[role] as TestServer;
    const login = { username: 'admin', password: INITIAL_PASSWORD };

    test('a rebinding page (another Host) cannot sign in with the initial password', async () => {
      for (const host of ['evil.example', `evil.example:${server().port}`, `127.0.0.1:${server().port}`]) {
        const reply = await withHost(server(), host, 'POST', '/api/session/login', login);
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
      const signedIn = await withHost(server(), 'backup.example.com', 'POST', '/api/session/login', login);
      assert.equal(signedIn.status, 200, signedIn.text);
    });
  });
}
