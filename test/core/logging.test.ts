// Logs never carry secrets, and every request is traceable by its id. Checked at the default
// level (info) and at debug.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

interface Scenario {
  level: 'info' | 'debug';
  station: TestServer;
  scout: TestServer;
  /** Every secret the scenario handled, by what it is. */
  secrets: Record<string, string>;
  /** X-Request-Id of every response. */
  requestIds: string[];
}

const unique = (label: string) => `${label}-${randomBytes(9).toString('hex')}`;

function newSecrets(currentPassword: string): Record<string, string> {
  return {
    currentPassword,
    newPassword: unique('Changed'),
    wrongPassword: unique('Wrong'),
    operatorPassword: unique('Operator'),
    credential: unique('bkd_st_Credential'),
  };
}

/**
 * The info servers start fresh with a custom initial password; the debug servers then take
 * over the same data dirs (a restart is much cheaper than a first PGlite start), signing in
 * with the password the info round set.
 */
async function startInfo(): Promise<Scenario> {
  const secrets = newSecrets(unique('Initial'));
  const env = { LOG_LEVEL: 'info', INITIAL_ADMIN_PASSWORD: secrets.currentPassword as string };
  const [station, scout] = await Promise.all([
    startServer('station', { env }),
    startServer('scout', { env }),
  ]);
  return { level: 'info', station, scout, secrets, requestIds: [] };
}

async function startDebug(info: Scenario): Promise<Scenario> {
  await Promise.all([info.station.stop(), info.scout.stop()]);
  const env = { LOG_LEVEL: 'debug' };
  const [station, scout] = await Promise.all([
    startServer('station', { env, dataDir: info.station.dataDir }),
    startServer('scout', { env, dataDir: info.scout.dataDir }),
  ]);
  return {
    level: 'debug',
    station,
    scout,
    secrets: newSecrets(info.secrets.newPassword as string),
    requestIds: [],
  };
}

/** Signs in, changes the password, makes and uses a token; returns the session cookie and token. */
async function exercise(s: Scenario, server: TestServer, cookieName: string): Promise<void> {
  const client = new Client(server.url);
  const seen = <R extends { headers: Headers; status: number; text: string }>(reply: R): R => {
    const id = reply.headers.get('x-request-id');
    assert.ok(id, `response without X-Request-Id (${reply.status} ${reply.text})`);
    s.requestIds.push(id);
    return reply;
  };
  const { secrets } = s;
  assert.equal(
    seen(await client.login('admin', secrets.wrongPassword as string)).status,
    401,
    'a failed sign-in is logged too',
  );
  const login = seen(await client.login('admin', secrets.currentPassword as string));
  assert.equal(login.status, 200, login.text);
  const cookie = client.cookie(cookieName);
  assert.ok(cookie, `session cookie ${cookieName} set`);
  secrets[`${server.role}Cookie`] = cookie;
  const changed = seen(
    await client.post('/api/session/change-password', {
      current_password: secrets.currentPassword,
      new_password: secrets.newPassword,
      confirm_new_password: secrets.newPassword,
    }),
  );
  assert.equal(changed.status, 200, changed.text);
  // A rejected change echoes nothing of the passwords either.
  seen(
    await client.post('/api/session/change-password', {
      current_password: secrets.wrongPassword,
      new_password: secrets.newPassword,
      confirm_new_password: secrets.newPassword,
    }),
  );
  const user = seen(
    await client.post('/api/users', {
      username: `operator-${s.level}`,
      password: secrets.operatorPassword,
      is_admin: false,
    }),
  );
  assert.equal(user.status, 201, user.text);

  const created = seen(
    await client.post('/api/automation-tokens', { name: 'logging test', scopes: ['manage'] }),
  );
  assert.equal(created.status, 201, created.text);
  const token = created.body.token as string;
  secrets[`${server.role}Token`] = token;
  const used = seen(await client.get(server.role === 'station' ? '/api/overview' : '/api/status', { token }));
  assert.equal(used.status, 200, used.text);
  seen(await client.get('/api/session/me', { token }));
  // A wrong bearer token that resembles the real one.
  seen(await client.get('/api/session/me', { token: `${token}x` }));

  if (server.role === 'scout') {
    const saved = seen(
      await client.post('/api/settings', {
        scout_credential: secrets.credential,
        station_url: 'http://127.0.0.1:9',
      }),
    );
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.body.settings.scout_credential, secrets.credential);
    seen(await client.get('/api/settings', { token }));
    seen(await client.get('/api/status'));
  }
  seen(await client.post('/api/session/logout'));
}

function logLines(server: TestServer): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
}

function checks(get: () => Scenario) {
  test('no password, token, session cookie or Station token appears in the log', () => {
    const s = get();
    for (const server of [s.station, s.scout]) {
      const output = server.output();
      assert.ok(output.length > 0);
      for (const [what, secret] of Object.entries(s.secrets)) {
        assert.ok(secret.length >= 8, `${what} is long enough to search for`);
        assert.equal(output.includes(secret), false, `${server.role} log (${s.level}) contains the ${what}`);
      }
    }
  });

  test('every request log line has a req_id, and responses carry it as X-Request-Id', () => {
    const s = get();
    const logged = new Set<string>();
    for (const server of [s.station, s.scout]) {
      const lines = logLines(server);
      const requests = lines.filter((line) => line.msg === 'request' || 'method' in line || 'path' in line);
      assert.ok(requests.length >= 10, `${server.role}: only ${requests.length} request lines`);
      for (const line of requests) {
        assert.equal(typeof line.req_id, 'string', `request line without req_id: ${JSON.stringify(line)}`);
        logged.add(line.req_id as string);
      }
    }
    assert.ok(s.requestIds.length > 0);
    assert.equal(new Set(s.requestIds).size, s.requestIds.length, 'request ids are unique');
    for (const id of s.requestIds) assert.ok(logged.has(id), `X-Request-Id ${id} is not in the log`);
  });
}

const scenarios: Partial<Record<'info' | 'debug', Scenario>> = {};

/** Log lines reach us through a pipe after the response; wait (briefly) until the last ones arrive. */
async function logsSettled(s: Scenario): Promise<void> {
  const deadline = Date.now() + 5_000;
  const all = () => s.station.output() + s.scout.output();
  while (Date.now() < deadline && !s.requestIds.every((id) => all().includes(id))) {
    await new Promise((r) => setTimeout(r, 25));
  }
}

before(async () => {
  // The default level: the helper passes TEST_LOG_LEVEL ?? 'info'; LOG_LEVEL in env wins anyway.
  const info = await startInfo();
  scenarios.info = info;
  await exercise(info, info.station, 'service_session');
  await exercise(info, info.scout, 'service_scout_session');
  await logsSettled(info);
  const debug = await startDebug(info);
  scenarios.debug = debug;
  await exercise(debug, debug.station, 'service_session');
  await exercise(debug, debug.scout, 'service_scout_session');
  await logsSettled(debug);
});

after(async () => {
  for (const s of [scenarios.debug, scenarios.info]) {
    if (s) await Promise.all([s.station.dispose(), s.scout.dispose()]);
  }
});

describe('at LOG_LEVEL=info', () => {
  checks(() => scenarios.info as Scenario);
});

describe('at LOG_LEVEL=debug', () => {
  checks(() => scenarios.debug as Scenario);
});
