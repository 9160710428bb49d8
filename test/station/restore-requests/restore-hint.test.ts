// The Station's restore hint: `POST {advertised_url}/backup/restore-notifications` with `{id}`,
// sent when an admin creates a restore request. The URL is built with the URL API (a stored
// trailing `?` or `#` must not cut the path off), redirects are not followed, and a Scout that
// never answers holds the request only a few seconds. A hint goes only to the address the
// Scout connected from or to a host in RESTORE_HINT_HOSTS (issue #23 item 7: before, a token
// holder's advertised_url made the Station POST to any address it named).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { adminClient, type Client } from '../../helpers/http.ts';
import { type Listening, listenLocal, type Receiver, startReceiver } from '../../helpers/receiver.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, upload } from '../../helpers/uploads.ts';

const KEY_FP = 'cd'.repeat(32);
const HINT_PATH = '/backup/restore-notifications';

let server: TestServer;
let admin: Client;
let token: string;
let receiver: Receiver;
/** Answers every request with a redirect to `receiver`. */
let redirector: Listening & { url: string; hits: number };
/** Accepts requests and never answers. */
let silent: Listening & { url: string; hits: number };
let instances = 0;
/** A host in RESTORE_HINT_HOSTS, and a recorder on it. */
const LISTED = '127.0.0.3';
let listed: Receiver;
/** A recorder on another local address (not the one the test connects from). */
let elsewhere: Receiver;
/** A recorder on the connecting address (127.0.0.1) at the same port as `elsewhere`. */
let connecting: Receiver;

/** Stores a snapshot for a new instance that advertises `advertisedUrl`; creates a restore request. */
async function requestRestore(advertisedUrl: string) {
  instances += 1;
  const instance = `hint${String(instances).padStart(12, '0')}`;
  const data = Buffer.from(`snapshot ${instances}`);
  const meta = archiveMeta(data, {
    scout_id: 'host-h',
    scout_instance_id: instance,
    encryption_key_fingerprint: KEY_FP,
    advertised_url: advertisedUrl,
  });
  const stored = await upload(server.url, token, data, meta);
  assert.equal(stored.finalize?.status, 200, JSON.stringify(stored.initiate.body));
  const file = stored.finalize?.body.stored_as as string;
  const started = performance.now();
  const reply = await admin.post(`/api/snapshots/host-h/${instance}/documents/${file}/restore`, {});
  assert.equal(reply.status, 201, reply.text);
  return {
    notified: reply.body.notified as boolean,
    id: reply.body.request.id as string,
    ms: performance.now() - started,
  };
}

before(async () => {
  receiver = await startReceiver();
  const redirecting = createServer((req, res) => {
    redirector.hits += 1;
    req.resume();
    res.writeHead(307, { location: `${receiver.url}${HINT_PATH}` }).end();
  });
  redirector = Object.assign(await listenLocal(redirecting), { url: '', hits: 0 });
  redirector.url = `http://127.0.0.1:${redirector.port}`;
  const hanging = createServer((req) => {
    silent.hits += 1;
    req.resume();
  });
  silent = Object.assign(await listenLocal(hanging), { url: '', hits: 0 });
  silent.url = `http://127.0.0.1:${silent.port}`;
  listed = await startReceiver(LISTED);
  elsewhere = await startReceiver('127.0.0.2');
  connecting = await startReceiver('127.0.0.1', Number(new URL(elsewhere.url).port));
  server = await startServer('station', { env: { RESTORE_HINT_HOSTS: `example.invalid, ${LISTED}` } });
  admin = await adminClient(server.url);
  const minted = await admin.post('/api/credentials/mint', { shared: true, max_registrations: 50 });
  assert.equal(minted.status, 201, minted.text);
  token = minted.body.credential;
});

after(async () => {
  await server?.dispose();
  await receiver?.close();
  await redirector?.close();
  await silent?.close();
  for (const r of [listed, elsewhere, connecting]) await r?.close();
});

describe('restore hint', () => {
  for (const suffix of ['', '/', '?', '#', '/?', '?x=1', '#frag', '/base/?', '/base#']) {
    test(`advertised_url ending "${suffix}" still gets POST …${HINT_PATH}`, async () => {
      const from = receiver.messages.length;
      const { notified, id } = await requestRestore(`${receiver.url}${suffix}`);
      assert.equal(notified, true);
      const got = receiver.messages.slice(from);
      const base = suffix.startsWith('/base') ? '/base' : '';
      assert.deepEqual(
        got.map((m) => [m.method, m.url, JSON.parse(m.body)]),
        [['POST', `${base}${HINT_PATH}`, { id }]],
      );
    });
  }

  test('a redirect is not followed: the hint counts as not delivered', async () => {
    const from = receiver.messages.length;
    const { notified } = await requestRestore(redirector.url);
    assert.equal(redirector.hits, 1, 'the redirecting Scout got the hint');
    assert.equal(notified, false);
    assert.deepEqual(receiver.messages.slice(from), [], 'the redirect target got nothing');
  });

  test('a Scout that never answers holds the request a few seconds at most', async () => {
    const { notified, ms } = await requestRestore(silent.url);
    assert.equal(silent.hits, 1);
    assert.equal(notified, false);
    // The hint gives up after 3 s; without a limit the request would wait minutes or forever.
    // The bound catches that on a loaded machine too; it is not a speed check.
    assert.ok(ms < 60_000, `the request took ${Math.round(ms)} ms`);
  });

  test('a URL naming another host is not contacted: the hint goes to the address the Scout connected from', async () => {
    const port = new URL(elsewhere.url).port;
    for (const url of [elsewhere.url, `http://scout.example.org:${port}/base`]) {
      const from = connecting.messages.length;
      const { notified, id } = await requestRestore(url);
      assert.equal(notified, true, url);
      assert.deepEqual(
        connecting.messages.slice(from).map((m) => [m.url, JSON.parse(m.body)]),
        [[`${url.endsWith('/base') ? '/base' : ''}${HINT_PATH}`, { id }]],
        `${url}: the hint reached the connecting address`,
      );
    }
    assert.deepEqual(elsewhere.messages, [], 'the named address got nothing');
  });

  test('a host listed in RESTORE_HINT_HOSTS gets the hint as advertised', async () => {
    const { notified, id } = await requestRestore(listed.url);
    assert.equal(notified, true);
    assert.deepEqual(
      listed.messages.map((m) => [m.url, JSON.parse(m.body)]),
      [[HINT_PATH, { id }]],
    );
  });

  test('the kept advertised_url is the pinned one (the dashboard shows where hints go)', async () => {
    await requestRestore(elsewhere.url);
    const overview = await admin.get('/api/overview');
    assert.equal(overview.status, 200, overview.text);
    const urls = (overview.body.scouts as { instances: { advertised_url: string | null }[] }[])
      .flatMap((s) => s.instances)
      .map((i) => i.advertised_url);
    assert.ok(urls.includes(`${connecting.url}/`), JSON.stringify(urls));
    assert.ok(!urls.some((u) => u?.startsWith(elsewhere.url)), 'no kept URL names another host');
  });
});
