// A real Station and a real Scout with the integrations switched on: ntfy notifications to
// local receivers (Station: stored snapshots, with filters; Scout: failed jobs), hook
// commands on both roles (facts as BACKUPD_* variables; a failing Scout pre-hook skips the
// job), and a Station behind an HTTPS reverse proxy whose private CA the Scout learns
// through /api/certificates/files without a restart.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { makePki } from '../helpers/pki.ts';
import { type Receiver, settle, startReceiver } from '../helpers/receiver.ts';
import * as scouts from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { startTlsProxy } from '../helpers/tls-proxy.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-notify-e2e-'));
const hookOut = join(work, 'hook-out');
mkdirSync(hookOut);

// The Station, and the Scout SCOUT_ID that backs up `<scanRoot>/docs` to it with `credential`.
let station: TestServer;
let stationAdmin: Client;
let scout: TestServer;
let scoutAdmin: Client;
let scanRoot: string;
let credential: string;
let instanceId: string;
// Local ntfy stand-ins.
let stationInbox: Receiver;
let scoutInbox: Receiver;
const SCOUT_ID = 'e2e-notify';
const TEMPLATE = '{{event}} {{job_name}} {{scout_id}} {{filename}}';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A cycle on the Scout (run-now, then idle); the TLS test's retries take a while. */
const runNow = () => scouts.runNow(scoutAdmin, { timeoutMs: 45_000 });
const jobState = (relativePath: string) => scouts.jobState(scoutAdmin, relativePath);
const snapshotCount = async (job: string) => (await scouts.snapshotsOf(stationAdmin, job)).length;
/** Saves the Scout's Station settings (a POST replaces them all). */
const pointScoutAt = (stationUrl: string) =>
  scouts.saveStationSettings(scoutAdmin, stationUrl, credential, SCOUT_ID);

let edits = 0;
/** Changes the docs job's size so the next cycle makes a new snapshot. */
function changeDocs(): void {
  edits += 1;
  writeFileSync(join(scanRoot, 'docs', 'grow.txt'), 'x'.repeat(edits));
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

/** A hook command that writes the BACKUPD_* environment to `file`. */
const envDump = (file: string) => `env | grep ^BACKUPD_ > '${file}'`;

/** Saves hooks whose commands dump the environment to `<hookOut>/<prefix>_pre` and `_post`. */
async function envDumpHooks(admin: Client, prefix: string, preField: string, postField: string) {
  const pre = join(hookOut, `${prefix}_pre`);
  const post = join(hookOut, `${prefix}_post`);
  expectStatus(await admin.post('/api/hooks', { [preField]: envDump(pre), [postField]: envDump(post) }), 200);
  return { pre, post };
}

/** Secrets in the servers' environment that no hook may see (INITIAL_ADMIN_PASSWORD as the default). */
const SERVER_SECRETS = { INITIAL_ADMIN_PASSWORD: 'admin', BACKUPD_TEST_CANARY: 'canary-server-secret' };
/** What a hook's environment may hold: the documented names (README, Hooks) and what sh adds. */
const HOOK_NAMES =
  /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|TZ|TMPDIR|LC_[A-Z_]+|BACKUPD_[A-Z_]+|PWD|OLDPWD|SHLVL|_)$/;

/** ntfy shows the Title header as sent (it decodes RFC 2047 words, not %XX escapes): plain words. */
function plainTitle(title: string | string[] | undefined): void {
  assert.match(String(title), / /, 'the title is words');
  assert.doesNotMatch(String(title), /%[0-9A-Fa-f]{2}/, `the title is not percent-encoded: ${title}`);
}

describe('notifications, hooks and TLS end to end', () => {
  before(async () => {
    [stationInbox, scoutInbox] = await Promise.all([startReceiver(), startReceiver()]);
    ({ server: station, admin: stationAdmin } = await scouts.startStation({ env: SERVER_SECRETS }));
    ({
      server: scout,
      admin: scoutAdmin,
      scanRoot,
    } = await scouts.startScout({
      fill: (root) => buildTree(root, { 'docs/.upload_dir': null, 'docs/a.txt': 'alpha' }),
      // The Scout reads neither DATABASE_URL nor AWS_*: there they are only secrets to keep.
      env: {
        ...SERVER_SECRETS,
        DATABASE_URL: 'postgres://u:canary-db-password@db/x',
        AWS_SECRET_ACCESS_KEY: 'canary-aws',
      },
    }));
    credential = await scouts.connectScout(scoutAdmin, stationAdmin, SCOUT_ID);
    instanceId = (await scouts.scoutStatus(scoutAdmin)).scout_instance_id;
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
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    const storedAs = String(state.last_stored_as);
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
      assert.ok(
        message.body.includes(String(state.last_error)),
        `the error is in the message: ${message.body}`,
      );
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
    const { pre, post } = await envDumpHooks(stationAdmin, 'station', 'pre_command', 'post_command');
    const count = await snapshotCount('docs');
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
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

  test('hooks on both roles see only the documented environment, and their output stays out of the log', async () => {
    const dump = (file: string) => `env > '${file}'; echo HOOK-STDOUT-CANARY; echo HOOK-STDERR-CANARY >&2`;
    const files = {
      station: join(hookOut, 'env_station'),
      scout: join(hookOut, 'env_scout'),
    };
    expectStatus(await stationAdmin.post('/api/hooks', { pre_command: dump(files.station) }), 200);
    expectStatus(await scoutAdmin.post('/api/hooks', { hook_pre_command: dump(files.scout) }), 200);
    changeDocs();
    await runNow();
    assert.equal((await jobState('docs')).last_status, 'uploaded');
    for (const [role, file] of Object.entries(files)) {
      const env = envOf(await readWhenThere(file));
      assert.equal(env.BACKUPD_JOB_NAME, 'docs', `${role}: the facts are there`);
      assert.ok(env.PATH, `${role}: PATH is passed`);
      for (const secret of [
        'INITIAL_ADMIN_PASSWORD',
        'BACKUPD_TEST_CANARY',
        'DATABASE_URL',
        'AWS_SECRET_ACCESS_KEY',
      ]) {
        assert.equal(env[secret], undefined, `${role}: ${secret} is not passed to the hook`);
      }
      const text = readFileSync(file, 'utf8');
      assert.doesNotMatch(text, /canary-/, `${role}: no server secret in the hook's environment`);
      const extra = Object.keys(env).filter((name) => !HOOK_NAMES.test(name));
      assert.deepEqual(extra, [], `${role}: only the documented names`);
    }
    for (const server of [station, scout]) {
      const log = server.output();
      assert.doesNotMatch(log, /HOOK-(STDOUT|STDERR)-CANARY/, `${server.role}: no hook output in the log`);
      const line = log.split('\n').find((l) => l.includes('"hook ran"') && l.includes('"phase":"pre"'));
      assert.ok(line, `${server.role}: the hook run is logged`);
      assert.match(line, /"output_bytes":\d+/);
      assert.match(line, /"duration_ms":\d+/);
      assert.match(line, /"exit_code":0/);
    }
    expectStatus(await stationAdmin.post('/api/hooks', {}), 200);
    expectStatus(await scoutAdmin.post('/api/hooks', {}), 200);
  });

  test('Scout hooks run around the job with BACKUPD_JOB_NAME, _RELATIVE_PATH and _STATUS', async () => {
    const { pre, post } = await envDumpHooks(scoutAdmin, 'scout', 'hook_pre_command', 'hook_post_command');
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
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
        hook_post_command: envDump(post),
      }),
      200,
    );
    const count = await snapshotCount('docs');
    const from = scoutInbox.messages.length;
    changeDocs();
    await runNow();
    const state = await jobState('docs');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /hook/i);
    assert.match(String(state.last_error), /\b3\b/, 'the exit code is named');
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

    // An entry the job folder refuses: the restore completes, and its notice says so, loudly.
    from = scoutInbox.messages.length;
    const docs = join(scanRoot, 'docs');
    // A file to write (one as in the snapshot is not rewritten at all).
    writeFileSync(join(docs, 'a.txt'), 'edited');
    execFileSync('chattr', ['+i', docs]); // immutable: no file in it can be replaced
    try {
      const withProblems = await scoutAdmin.post('/api/recovery/restore', { relative_path: 'docs' });
      expectStatus(withProblems, 200);
      assert.ok(withProblems.body.problem_count > 0, withProblems.text);
    } finally {
      execFileSync('chattr', ['-i', docs]);
    }
    const notices = await settle(scoutInbox, from);
    assert.deepEqual(
      notices.map((m) => m.body),
      ['restore_completed docs'],
    );
    assert.match(String(notices[0]?.headers.title), /Restore of docs completed with problems/);
    assert.equal(notices[0]?.headers.priority, 'high');

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
    const pems = makePki(work);
    const proxy = await startTlsProxy(station.url, pems.leaf, pems.leafKey);
    try {
      await pointScoutAt(proxy.url);
      const count = await snapshotCount('docs');
      changeDocs();
      await runNow(); // three retries with 1 + 2 + 4 s of backoff
      const failed = await jobState('docs');
      assert.equal(failed.last_status, 'failed');
      assert.match(String(failed.last_error), /reach the Station/i);
      assert.match(String(failed.last_error), /certificate/i);
      assert.equal(await snapshotCount('docs'), count);
      assert.equal(proxy.paths.length, 0, 'no request got through the TLS handshake');

      const uploaded = await scoutAdmin.upload(
        '/api/certificates/files',
        'certificate_file',
        'private-ca.pem',
        pems.ca,
      );
      expectStatus(uploaded, 201);

      await runNow();
      const done = await jobState('docs');
      assert.equal(done.last_status, 'uploaded', done.last_error ?? undefined);
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
