// The `/api` guards every role shares: same-origin writes, the JSON error shape, and the
// sign-in and general rate limits. One Station for most of it, one Scout for the origin check.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, adminClient, Client, type Reply, type RequestOptions } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const EVIL = 'http://evil.example';

/** Every reply this file receives, to check none leaks a stack trace. */
const replies: { label: string; text: string }[] = [];

class RecordingClient extends Client {
  override async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<Reply<T>> {
    const reply = await super.request<T>(method, path, body, options);
    replies.push({ label: `${method} ${path}`, text: reply.text });
    return reply;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: replies are loosely typed JSON, as in test/helpers/http.ts
type Json = any;

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Json;
  text: string;
}

/**
 * A request from a chosen loopback source address (127.0.0.x), so tests that exhaust a
 * per-client limit do not starve each other. Always to the server on 127.0.0.1.
 */
function requestFrom(
  localAddress: string,
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  agent?: Agent,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        localAddress,
        agent,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => {
          let parsed: Json = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
          replies.push({ label: `${method} ${path} from ${localAddress}`, text });
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

function assertDetail(reply: { status: number; body: Json; text: string }, status: number, detail: RegExp) {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
  assert.equal(typeof reply.body?.detail, 'string', `no string detail in ${reply.text}`);
  assert.match(reply.body.detail, detail);
}

function retryAfter(value: string | string[] | null | undefined): number {
  assert.equal(typeof value, 'string', 'Retry-After header present');
  assert.match(value as string, /^\d+$/, `Retry-After is a whole number of seconds, got ${value}`);
  return Number(value);
}

let station: TestServer;
let scout: TestServer;
let admin: RecordingClient;

before(async () => {
  [station, scout] = await Promise.all([startServer('station'), startServer('scout')]);
  await adminClient(station.url);
  await adminClient(scout.url);
  admin = new RecordingClient(station.url);
  const signedIn = await admin.login('admin', ADMIN_PASSWORD);
  assert.equal(signedIn.status, 200, signedIn.text);
});

after(async () => {
  await Promise.all([station?.dispose(), scout?.dispose()]);
});

describe('same-origin writes', () => {
  for (const role of ['station', 'scout'] as const) {
    test(`${role}: a cross-origin write is refused with 403`, async () => {
      const server = role === 'station' ? station : scout;
      const client = new RecordingClient(server.url);
      const login = { username: 'admin', password: ADMIN_PASSWORD };
      const byOrigin = await client.post('/api/session/login', login, { headers: { origin: EVIL } });
      assertDetail(byOrigin, 403, /origin/i);
      assert.equal(client.cookieHeader(), '', 'no session cookie is set');
      const byFetchSite = await client.post('/api/session/login', login, {
        headers: { 'sec-fetch-site': 'cross-site' },
      });
      assertDetail(byFetchSite, 403, /origin/i);
      // An opaque origin (sandboxed frame, file://) is not the server's origin either.
      assertDetail(
        await client.post('/api/session/login', login, { headers: { origin: 'null' } }),
        403,
        /origin/i,
      );
      // The same host on another port is another origin.
      const otherPort = `http://127.0.0.1:${server.port === 65535 ? 1 : server.port + 1}`;
      assertDetail(
        await client.post('/api/session/login', login, { headers: { origin: otherPort } }),
        403,
        /origin/i,
      );
    });

    test(`${role}: a same-origin write and a write without origin headers pass`, async () => {
      const server = role === 'station' ? station : scout;
      const login = { username: 'admin', password: ADMIN_PASSWORD };
      const sameOrigin = new RecordingClient(server.url);
      const reply = await sameOrigin.post('/api/session/login', login, {
        headers: { origin: `http://127.0.0.1:${server.port}`, 'sec-fetch-site': 'same-origin' },
      });
      assert.equal(reply.status, 200, reply.text);
      const noOrigin = new RecordingClient(server.url);
      assert.equal((await noOrigin.post('/api/session/login', login)).status, 200);
    });
  }

  test('a cross-origin write with a valid session cookie is refused and changes nothing', async () => {
    const before = await admin.get('/api/overview?section=settings');
    const reply = await admin.post(
      '/api/settings',
      { retention_keep_last: 2 },
      { headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } },
    );
    assertDetail(reply, 403, /origin/i);
    const afterwards = await admin.get('/api/overview?section=settings');
    assert.deepEqual(afterwards.body.settings, before.body.settings);
    // Sign-out is a write as well.
    assertDetail(
      await admin.post('/api/session/logout', undefined, { headers: { origin: EVIL } }),
      403,
      /origin/i,
    );
    assert.equal((await admin.get('/api/session/me')).body.authenticated, true);
  });

  test('a cross-origin GET is not blocked', async () => {
    const reply = await admin.get('/api/session/me', {
      headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.authenticated, true);
    const overview = await admin.get('/api/overview', { headers: { origin: EVIL } });
    assert.equal(overview.status, 200, overview.text);
  });
});

describe('error shape', () => {
  test('malformed JSON is 400 "request body is not valid JSON"', async () => {
    for (const raw of ['{"username": "admin",', 'not json', "{'a': 1}"]) {
      const reply = await admin.post('/api/session/login', undefined, { raw });
      assertDetail(reply, 400, /^request body is not valid JSON$/);
    }
    assertDetail(
      await admin.post('/api/settings', undefined, { raw: '{retention_keep_last: 5}' }),
      400,
      /not valid JSON/,
    );
  });

  test('an unknown /api route is a JSON 404 naming the path', async () => {
    const reply = await admin.get('/api/no-such-thing');
    assertDetail(reply, 404, /\/api\/no-such-thing/);
    assert.match(reply.headers.get('content-type') ?? '', /application\/json/);
    const anonymous = new RecordingClient(station.url);
    assertDetail(await anonymous.get('/api/no/such/route'), 404, /\/api\/no\/such\/route/);
    assertDetail(await admin.delete('/api/overview'), 404, /overview/);
  });

  test('a wrong-typed field is 400 naming the field', async () => {
    const anonymous = new RecordingClient(station.url);
    assertDetail(
      await anonymous.post('/api/session/login', { username: 42, password: 'x' }),
      400,
      /username/,
    );
    assertDetail(
      await anonymous.post('/api/session/login', { username: 'admin', password: ['x'] }),
      400,
      /password/,
    );
    assertDetail(await admin.post('/api/settings', { retention_keep_last: '5' }), 400, /retention_keep_last/);
    assertDetail(
      await admin.post('/api/automation-tokens', { name: 'n', scopes: ['read'], ttl_days: '30' }),
      400,
      /ttl_days/,
    );
    assertDetail(await admin.post('/api/automation-tokens', { name: 'n', scopes: 'read' }), 400, /scopes/);
    assertDetail(
      await admin.post('/api/automation-tokens', { name: 'n', scopes: ['everything'] }),
      400,
      /scopes/,
    );
    assertDetail(await admin.post('/api/users', { username: 'u1', password: 12345678 }), 400, /password/);
  });

  test('odd requests get a JSON error below 500', async () => {
    const attempts: Reply[] = [
      await admin.post('/api/session/login', undefined, { raw: 'null' }),
      await admin.post('/api/session/login', undefined, { raw: '[]' }),
      await admin.post('/api/session/login', undefined, { raw: '"text"' }),
      await admin.post('/api/session/login', undefined, {
        raw: `{"username":"${'a'.repeat(300)}","password":"x"}`,
      }),
      await admin.post('/api/settings', undefined, { raw: `{"retention_keep_last":${'9'.repeat(400)}}` }),
      await admin.post('/api/session/login', undefined, {
        raw: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      }),
      await admin.post('/api/session/login', undefined, { raw: 'x'.repeat(1024 * 1024 + 10) }),
      await admin.get('/api/%E0%A4%A'),
      await admin.put('/api/users/%ZZ', { is_admin: true }),
      await admin.put('/api/users/does-not-exist', { is_admin: true }),
      await admin.delete('/api/users/does-not-exist'),
      await admin.delete('/api/automation-tokens/%ZZ'),
      await admin.get('/api/overview?section=%ZZ'),
      await admin.post(
        '/api/session/login',
        { username: 'admin', password: 'x' },
        { headers: { 'content-type': 'text/plain' } },
      ),
      await admin.get('/api/session/me', { headers: { cookie: 'service_session=%ZZ; other=;;' } }),
      await admin.get('/api/session/me', { headers: { authorization: 'Bearer' } }),
      await admin.get('/api/session/me', { headers: { authorization: `Bearer ${'x'.repeat(5000)}` } }),
    ];
    for (const reply of attempts) {
      assert.ok(
        reply.status >= 200 && reply.status < 500,
        `status ${reply.status}: ${reply.text.slice(0, 300)}`,
      );
      if (reply.status >= 400) {
        assert.ok(
          reply.body && typeof reply.body === 'object' && 'detail' in reply.body,
          reply.text.slice(0, 300),
        );
      }
    }
    // One of them is a failed sign-in from 127.0.0.1: far from the limit of 10.
    assert.equal((await admin.login('admin', ADMIN_PASSWORD)).status, 200);
  });
});

describe('sign-in rate limit', () => {
  test('10 failed sign-ins from one address: the 11th is 429 with Retry-After, even with the right password; other addresses are not locked out', async () => {
    const password = 'rate-limited-password';
    const created = await admin.post('/api/users', { username: 'limited', password, is_admin: false });
    assert.equal(created.status, 201, created.text);

    const client = '127.0.0.2';
    for (let i = 0; i < 10; i += 1) {
      const failed = await requestFrom(client, station, 'POST', '/api/session/login', {
        username: 'limited',
        password: `wrong-${i}`,
      });
      assertDetail(failed, 401, /username or password/);
    }
    const blocked = await requestFrom(client, station, 'POST', '/api/session/login', {
      username: 'limited',
      password,
    });
    assertDetail(blocked, 429, /too many|try again/i);
    const wait = retryAfter(blocked.headers['retry-after']);
    assert.ok(wait > 0 && wait <= 900, `Retry-After ${wait}`);
    assert.equal(blocked.headers['set-cookie'], undefined, 'no session is opened');

    // An attacker's failures do not lock the owner out: from another address the right
    // password still works (only a much higher per-username ceiling applies everywhere).
    const elsewhere = await requestFrom('127.0.0.4', station, 'POST', '/api/session/login', {
      username: 'limited',
      password,
    });
    assert.equal(elsewhere.status, 200, elsewhere.text);
    // Per client address: that address may not try other accounts either.
    const otherUser = await requestFrom(client, station, 'POST', '/api/session/login', {
      username: 'admin',
      password: ADMIN_PASSWORD,
    });
    assertDetail(otherUser, 429, /too many|try again/i);
    // An unrelated address and account are not affected.
    const unrelated = await requestFrom('127.0.0.5', station, 'POST', '/api/session/login', {
      username: 'admin',
      password: ADMIN_PASSWORD,
    });
    assert.equal(unrelated.status, 200, unrelated.text);

    station.advanceClock(15 * 60_000 + 1_000);
    const again = await requestFrom(client, station, 'POST', '/api/session/login', {
      username: 'limited',
      password,
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.user.username, 'limited');
  });
});

describe('general API rate limit', () => {
  test('1,200 /api requests per minute per client address; the 1,201st is 429', async () => {
    const client = '127.0.0.3';
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    try {
      let passed = 0;
      const statuses = new Map<number, number>();
      for (let sent = 0; sent < 1200; sent += 50) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, () =>
            requestFrom(client, station, 'GET', '/api/session/me', undefined, agent),
          ),
        );
        for (const reply of batch) {
          statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
          if (reply.status === 200) passed += 1;
        }
      }
      assert.equal(passed, 1200, `statuses: ${JSON.stringify([...statuses])}`);

      const limited = await requestFrom(client, station, 'GET', '/api/session/me', undefined, agent);
      assertDetail(limited, 429, /too many|try again/i);
      const wait = retryAfter(limited.headers['retry-after']);
      assert.ok(wait > 0 && wait <= 60, `Retry-After ${wait}`);
      // Writes are counted too, and refused the same way.
      assertDetail(
        await requestFrom(client, station, 'POST', '/api/session/logout', undefined, agent),
        429,
        /too many|try again/i,
      );

      // Only /api is limited, and only for that client address.
      assert.equal((await requestFrom(client, station, 'GET', '/health', undefined, agent)).status, 200);
      assert.equal((await admin.get('/api/session/me')).status, 200);

      station.advanceClock(60_000);
      const later = await requestFrom(client, station, 'GET', '/api/session/me', undefined, agent);
      assert.equal(later.status, 200, later.text);
    } finally {
      agent.destroy();
    }
  });
});

test('no response carries a stack trace or source path', () => {
  assert.ok(replies.length > 20, `only ${replies.length} replies recorded`);
  for (const { label, text } of replies) {
    assert.doesNotMatch(text, /\n\s*at \S/, `stack frame in ${label}: ${text.slice(0, 300)}`);
    assert.doesNotMatch(text, /\bat \S+ \(/, `stack frame in ${label}: ${text.slice(0, 300)}`);
    assert.doesNotMatch(text, /\.(ts|js|mjs):\d+/, `source location in ${label}: ${text.slice(0, 300)}`);
    assert.doesNotMatch(
      text,
      /node_modules|\/src\/|file:\/\//,
      `source path in ${label}: ${text.slice(0, 300)}`,
    );
  }
});
