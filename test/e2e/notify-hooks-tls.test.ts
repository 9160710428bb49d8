// A real Station and a real Scout with the integrations switched on: ntfy notifications to
// local receivers (Station: stored snapshots, with filters; Scout: failed jobs), hook
// commands on both roles (facts as BACKUPD_* variables; a failing Scout pre-hook skips the
// job), and a Station behind an HTTPS reverse proxy whose private CA the Scout learns
// through /api/certificates/files without a restart.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminClient, type Client, type Reply } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-notify-e2e-'));
const hookOut = join(work, 'hook-out');
mkdirSync(hookOut);

// ---------------------------------------------------------------------------------------------
// Local ntfy stand-ins.

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  messages: Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const messages: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      messages.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x","event":"message"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A private CA and a server certificate for 127.0.0.1, made with `openssl`.

function makeCertificates(dir: string): { ca: string; leaf: string; leafKey: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '30',
    '-subj',
    '/CN=Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'leaf.key',
    '-out',
    'leaf.csr',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(
    join(dir, 'leaf.ext'),
    'basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  run([
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '30',
    '-extfile',
    'leaf.ext',
  ]);
  return {
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    leaf: readFileSync(join(dir, 'leaf.pem'), 'utf8'),
    leafKey: readFileSync(join(dir, 'leaf.key'), 'utf8'),
  };
}

/** An HTTPS reverse proxy to `target` (http), streaming bodies both ways; counts requests. */
async function startTlsProxy(
  target: string,
  cert: string,
  key: string,
): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const paths: string[] = [];
  const server = createHttpsServer({ cert, key }, (req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `proxy: ${error.message}` }));
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------

let station: TestServer;
let scout: TestServer;
let stationAdmin: Client;
let scoutAdmin: Client;
let credential: string;
let scanRoot: string;
let instanceId: string;
let stationInbox: Receiver;
let scoutInbox: Receiver;
const SCOUT_ID = 'e2e-notify';
const TEMPLATE = '{{event}} {{job_name}} {{scout_id}} {{filename}}';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectStatus(reply: Reply, status: number): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
}

async function waitIdle(): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    const status = await scoutAdmin.get('/api/status');
    if (status.body.operation === null && !status.body.run_now_requested) return;
    await sleep(50);
  }
  throw new Error('the Scout did not become idle');
}

async function runNow(): Promise<void> {
  const reply = await scoutAdmin.post('/api/run-now');
  expectStatus(reply, 200);
  assert.equal(reply.body.status, 'queued');
  await waitIdle();
}

async function jobState(relativePath: string) {
  const list = await scoutAdmin.get('/api/directories');
  const dir = list.body.directories.find((d: { relative_path: string }) => d.relative_path === relativePath);
  assert.ok(dir, `job ${relativePath} is listed`);
  return dir.state;
}

let edits = 0;
/** Changes the docs job's size so the next cycle makes a new snapshot. */
function changeDocs(): void {
  edits += 1;
  writeFileSync(join(scanRoot, 'docs', 'grow.txt'), 'x'.repeat(edits));
}

async function snapshotCount(job: string): Promise<number> {
  const overview = await stationAdmin.get('/api/overview?section=snapshots');
  let count = 0;
  for (const s of overview.body.scouts)
    for (const i of s.instances) for (const j of i.jobs) if (j.job_name === job) count += j.snapshots.length;
  return count;
}

/** Waits for up to `ms` for a file to appear; returns its content. */
async function readWhenThere(path: string, ms = 5000): Promise<string> {
  const deadline = Date.now() + ms;
  while (!existsSync(path) || readFileSync(path, 'utf8') === '') {
    if (Date.now() > deadline) throw new Error(`${path} did not appear`);
    await sleep(25);
  }
  await sleep(50);
  return readFileSync(path, 'utf8');
}

/** `KEY=value` lines of an `env` dump. */
function envOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Lets fire-and-forget notifications arrive, then returns the messages received since `from`. */
async function settle(inbox: Receiver, from: number, ms = 1000): Promise<Received[]> {
  await sleep(ms);
  return inbox.messages.slice(from);
}

/** ntfy shows the Title header as sent (it decodes RFC 2047 words, not %XX escapes): plain words. */
function plainTitle(title: string | string[] | undefined): void {
  assert.match(String(title), / /, 'the title is words');
  assert.doesNotMatch(String(title), /%[0-9A-Fa-f]{2}/, `the title is not percent-encoded: ${title}`);
}

/** Saves the Scout's Station settings (a POST replaces them all). */
async function pointScoutAt(stationUrl: string): Promise<void> {
  const saved = await scoutAdmin.post('/api/settings', {
    station_url: stationUrl,
    scout_credential: credential,
    scout_id: SCOUT_ID,
  });
  expectStatus(saved, 200);
}

describe('notifications, hooks and TLS end to end', () => {
  before(async () => {
    [stationInbox, scoutInbox] = await Promise.all([startReceiver(), startReceiver()]);
    station = await startServer('station');
    stationAdmin = await adminClient(station.url);
    credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const scoutData = mkdtempSync(join(tmpdir(), 'backupd-scout-'));
    scanRoot = join(scoutData, 'scan');
    mkdirSync(join(scanRoot, 'docs'), { recursive: true });
    writeFileSync(join(scanRoot, 'docs', '.upload_dir'), '');
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'alpha');
    scout = await startServer('scout', { dataDir: scoutData, env: { SCAN_ROOT: scanRoot } });
    scoutAdmin = await adminClient(scout.url);
    await pointScoutAt(station.url);
    instanceId = (await scoutAdmin.get('/api/status')).body.scout_instance_id;
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    await Promise.all([stationInbox?.close(), scoutInbox?.close()]);
    rmSync(work, { recursive: true, force: true });
  });

  test('a stored snapshot sends exactly one Station notification with the template rendered', async () => {
    const saved = await stationAdmin.post('/api/ntfy', {
      ntfy_url: stationInbox.url,
      ntfy_topic: 'station-events',
      ntfy_message_template: TEMPLATE,
    });
    expectStatus(saved, 200);
    const from = stationInbox.messages.length;
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'uploaded', state.last_error);
    const storedAs: string = state.last_stored_as;
    assert.match(storedAs, /^docs__.+\.tar\.zst$/);
    const got = await settle(stationInbox, from);
    assert.equal(got.length, 1, `one notification, got ${JSON.stringify(got.map((m) => m.body))}`);
    const message = got[0];
    assert.ok(message);
    assert.equal(message.method, 'POST');
    assert.equal(message.url, '/station-events');
    assert.equal(message.body, `snapshot_stored docs ${SCOUT_ID} ${storedAs}`);
    assert.ok(String(message.headers.title ?? '').includes(SCOUT_ID), 'the title names the Scout');
    assert.equal(message.headers.priority, 'default');
    assert.equal(typeof message.headers.tags, 'string');
    assert.equal(scoutInbox.messages.length, 0, 'a success is not sent by the Scout');
    plainTitle(message.headers.title);
  });

  test('a Scout filter that does not match silences the Station; a matching list lets it through', async () => {
    const base = {
      ntfy_url: stationInbox.url,
      ntfy_topic: 'station-events',
      ntfy_message_template: TEMPLATE,
    };
    expectStatus(
      await stationAdmin.post('/api/ntfy', { ...base, ntfy_match_scout_id: 'another-scout' }),
      200,
    );
    let from = stationInbox.messages.length;
    changeDocs();
    await runNow();
    assert.equal((await jobState('docs')).last_status, 'uploaded');
    assert.deepEqual(await settle(stationInbox, from), [], 'no notification for a filtered-out Scout');

    // The instance and source filters, and a comma-separated list that includes this Scout.
    expectStatus(
      await stationAdmin.post('/api/ntfy', {
        ...base,
        ntfy_match_scout_id: `another-scout, ${SCOUT_ID}`,
        ntfy_match_scout_instance_id: instanceId,
        ntfy_match_source: 'upload',
      }),
      200,
    );
    from = stationInbox.messages.length;
    changeDocs();
    await runNow();
    const stored = (await jobState('docs')).last_stored_as;
    const got = await settle(stationInbox, from);
    assert.deepEqual(
      got.map((m) => m.body),
      [`snapshot_stored docs ${SCOUT_ID} ${stored}`],
    );

    expectStatus(await stationAdmin.post('/api/ntfy', { ...base, ntfy_match_source: 'verify' }), 200);
    from = stationInbox.messages.length;
    changeDocs();
    await runNow();
    assert.equal((await jobState('docs')).last_status, 'uploaded');
    assert.deepEqual(await settle(stationInbox, from), [], 'no notification for a filtered-out source');
  });

  test('a failing job sends exactly one notification from the Scout', async () => {
    expectStatus(
      await scoutAdmin.post('/api/ntfy', { ntfy_url: scoutInbox.url, ntfy_topic: 'scout-events' }),
      200,
    );
    expectStatus(await stationAdmin.post('/api/admin/uploads/pause'), 200);
    const from = scoutInbox.messages.length;
    const stationFrom = stationInbox.messages.length;
    let title = '';
    changeDocs();
    try {
      await runNow();
      const state = await jobState('docs');
      assert.equal(state.last_status, 'failed');
      const got = await settle(scoutInbox, from);
      assert.equal(got.length, 1, `one notification, got ${JSON.stringify(got.map((m) => m.body))}`);
      const message = got[0];
      assert.ok(message);
      assert.equal(message.url, '/scout-events');
      assert.equal(message.headers.priority, 'high');
      assert.match(String(message.headers.title), /docs/);
      title = String(message.headers.title);
      // The default template ({{summary}}) names the job, the Scout and the error.
      assert.match(message.body, /docs/);
      assert.match(message.body, new RegExp(SCOUT_ID));
      assert.ok(message.body.includes(state.last_error), `the error is in the message: ${message.body}`);
      assert.equal(stationInbox.messages.length, stationFrom, 'the refused upload is not a Station event');
    } finally {
      expectStatus(await stationAdmin.post('/api/admin/uploads/resume'), 200);
    }
    const again = scoutInbox.messages.length;
    await runNow();
    assert.equal((await jobState('docs')).last_status, 'uploaded');
    assert.deepEqual(await settle(scoutInbox, again, 500), [], 'a success sends nothing from the Scout');
    plainTitle(title);
  });

  test('Station hooks run around finalize with the facts as BACKUPD_* variables', async () => {
    const pre = join(hookOut, 'station_pre');
    const post = join(hookOut, 'station_post');
    expectStatus(
      await stationAdmin.post('/api/hooks', {
        pre_command: `env | grep ^BACKUPD_ > '${pre}'`,
        post_command: `env | grep ^BACKUPD_ > '${post}'`,
      }),
      200,
    );
    const count = await snapshotCount('docs');
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'uploaded', state.last_error);
    assert.equal(await snapshotCount('docs'), count + 1);
    const preEnv = envOf(await readWhenThere(pre));
    assert.equal(preEnv.BACKUPD_SCOUT_ID, SCOUT_ID);
    assert.equal(preEnv.BACKUPD_SCOUT_INSTANCE_ID, instanceId);
    assert.equal(preEnv.BACKUPD_JOB_NAME, 'docs');
    assert.ok(preEnv.BACKUPD_EVENT, 'BACKUPD_EVENT is set');
    assert.match(preEnv.BACKUPD_SIZE_BYTES ?? '', /^\d+$/);
    const postEnv = envOf(await readWhenThere(post));
    assert.equal(postEnv.BACKUPD_SCOUT_ID, SCOUT_ID);
    assert.equal(postEnv.BACKUPD_JOB_NAME, 'docs');
    assert.equal(postEnv.BACKUPD_EVENT, 'snapshot_stored');
    assert.equal(postEnv.BACKUPD_FILENAME, state.last_stored_as);
    assert.notEqual(preEnv.BACKUPD_EVENT, postEnv.BACKUPD_EVENT, 'pre and post report different events');
    expectStatus(await stationAdmin.post('/api/hooks', {}), 200);
  });

  test('Scout hooks run around the job with BACKUPD_JOB_NAME, _RELATIVE_PATH and _STATUS', async () => {
    const pre = join(hookOut, 'scout_pre');
    const post = join(hookOut, 'scout_post');
    expectStatus(
      await scoutAdmin.post('/api/hooks', {
        hook_pre_command: `env | grep ^BACKUPD_ > '${pre}'`,
        hook_post_command: `env | grep ^BACKUPD_ > '${post}'`,
      }),
      200,
    );
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'uploaded', state.last_error);
    const preEnv = envOf(await readWhenThere(pre));
    assert.equal(preEnv.BACKUPD_JOB_NAME, 'docs');
    assert.equal(preEnv.BACKUPD_RELATIVE_PATH, 'docs');
    assert.equal(preEnv.BACKUPD_SCOUT_ID, SCOUT_ID);
    assert.ok(preEnv.BACKUPD_EVENT, 'BACKUPD_EVENT is set');
    assert.equal(preEnv.BACKUPD_STATUS, undefined, 'the pre-hook runs before there is a status');
    const postEnv = envOf(await readWhenThere(post));
    assert.equal(postEnv.BACKUPD_JOB_NAME, 'docs');
    assert.equal(postEnv.BACKUPD_RELATIVE_PATH, 'docs');
    assert.equal(postEnv.BACKUPD_STATUS, 'uploaded');
    assert.equal(postEnv.BACKUPD_STORED_AS, state.last_stored_as);
  });

  test('a Scout pre-hook that exits 3 fails the job and skips the upload', async () => {
    const post = join(hookOut, 'scout_post_after_failure');
    expectStatus(
      await scoutAdmin.post('/api/hooks', {
        hook_pre_command: 'echo "database not ready"; exit 3',
        hook_post_command: `env | grep ^BACKUPD_ > '${post}'`,
      }),
      200,
    );
    const count = await snapshotCount('docs');
    const from = scoutInbox.messages.length;
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'failed');
    assert.match(state.last_error, /hook/i);
    assert.match(state.last_error, /\b3\b/, 'the exit code is named');
    assert.equal(await snapshotCount('docs'), count, 'nothing was uploaded');
    const postEnv = envOf(await readWhenThere(post));
    assert.equal(postEnv.BACKUPD_STATUS, 'failed', 'the post-hook still runs and sees the failure');
    const got = await settle(scoutInbox, from);
    assert.equal(got.length, 1, 'the skipped job is notified once');

    expectStatus(await scoutAdmin.post('/api/hooks', {}), 200);
    await runNow();
    assert.equal((await jobState('docs')).last_status, 'uploaded', 'without the hook the job uploads');
    assert.equal(await snapshotCount('docs'), count + 1);
  });

  test('a Scout restore notifies its outcome once; a preview notifies nothing', async () => {
    expectStatus(
      await scoutAdmin.post('/api/ntfy', {
        ntfy_url: scoutInbox.url,
        ntfy_topic: 'scout-events',
        ntfy_message_template: '{{event}} {{job_name}}',
      }),
      200,
    );
    let from = scoutInbox.messages.length;
    const preview = await scoutAdmin.post('/api/recovery/preview', { relative_path: 'docs' });
    expectStatus(preview, 200);
    assert.deepEqual(await settle(scoutInbox, from, 500), [], 'a preview is not a restore');

    from = scoutInbox.messages.length;
    const restored = await scoutAdmin.post('/api/recovery/restore', { relative_path: 'docs' });
    expectStatus(restored, 200);
    assert.equal(restored.body.status, 'restored');
    assert.deepEqual(
      (await settle(scoutInbox, from)).map((m) => m.body),
      ['restore_completed docs'],
    );

    from = scoutInbox.messages.length;
    const missing = await scoutAdmin.post('/api/recovery/restore', {
      relative_path: 'docs',
      fingerprint: '0000beef',
    });
    assert.equal(missing.status, 404, missing.text);
    const failed = await settle(scoutInbox, from);
    assert.deepEqual(
      failed.map((m) => m.body),
      ['restore_failed docs'],
    );
    assert.equal(failed[0]?.headers.priority, 'high');
  });

  test('a Station behind HTTPS with a private CA: refused until the CA is uploaded, then used at once', async () => {
    const pems = makeCertificates(work);
    const proxy = await startTlsProxy(station.url, pems.leaf, pems.leafKey);
    try {
      await pointScoutAt(proxy.url);
      const count = await snapshotCount('docs');
      changeDocs();
      await runNow(); // three retries with 1 + 2 + 4 s of backoff
      const failed = await jobState('docs');
      assert.equal(failed.last_status, 'failed');
      assert.match(failed.last_error, /reach the Station/i);
      assert.match(failed.last_error, /certificate/i);
      assert.equal(await snapshotCount('docs'), count);
      assert.equal(proxy.paths.length, 0, 'no request got through the TLS handshake');

      const form = new FormData();
      form.append('certificate_file', new Blob([pems.ca]), 'private-ca.pem');
      const uploaded = await fetch(`${scout.url}/api/certificates/files`, {
        method: 'POST',
        headers: { cookie: scoutAdmin.cookieHeader() },
        body: form,
      });
      assert.equal(uploaded.status, 201, await uploaded.text());

      await runNow();
      const done = await jobState('docs');
      assert.equal(done.last_status, 'uploaded', done.last_error);
      assert.equal(await snapshotCount('docs'), count + 1);
      assert.ok(
        proxy.paths.some((p) => p.startsWith('POST /backup/uploads/initiate')),
        `the upload went through the proxy: ${proxy.paths.join(', ')}`,
      );
      assert.ok(proxy.paths.some((p) => /^POST \/backup\/uploads\/[^/]+\/finalize/.test(p)));
    } finally {
      await pointScoutAt(station.url);
      await proxy.close();
    }
  });
});
