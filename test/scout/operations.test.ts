// The Scout's status, schedule and operations without a Station: GET /api/status fields,
// cron changes, run-now / already_running / cancel-operation, uploads pause, clear-staged,
// force-send of unknown jobs, and the Scout key (read, rotate, keyring, file mode).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ScoutStatus } from '../../src/shared/protocol/scout-status.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import { adminClient, Client, mintAutomationToken } from '../helpers/http.ts';
import { jobState, runNow, scoutStatus, stagedFiles, startScout, waitIdle } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

let scout: TestServer;
let admin: Client;
let readToken: string;
let scanRoot: string;

const HEX64 = /^[0-9a-f]{64}$/;
const TEST_CRON = '0 0 29 2 *';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How often the tests read the Scout's status while waiting. */
const POLL = { intervalMs: 25 };
const status = () => scoutStatus(admin);
const staging = () => stagedFiles(scout.dataDir);

before(async () => {
  ({
    server: scout,
    admin,
    scanRoot,
  } = await startScout({
    fill: (scan) => buildTree(scan, { 'docs/.upload_dir': '', 'docs/a.txt': 'alpha' }),
  }));
  readToken = await mintAutomationToken(admin, ['read']);
});

after(async () => {
  await scout?.dispose();
});

describe('status', () => {
  test('an idle Scout reports IDs, settings, key, uploads, circuit, scheduler and no operation', async () => {
    const body = await status();
    assert.equal(typeof body.scout_id, 'string');
    assert.ok(body.scout_id.length > 0);
    assert.match(body.scout_instance_id, /^[0-9a-f]{16,}$/);
    assert.equal(body.settings?.station_url ?? null, null);
    assert.equal(body.settings?.scout_credential ?? null, null);
    // The test helper schedules cycles for a leap day so none fires during the suite.
    assert.equal(body.settings?.cron_schedule, TEST_CRON);
    assert.equal(body.settings?.scout_id, body.scout_id);
    assert.match(body.key_fingerprint, HEX64);
    assert.equal(body.key_saved_at, null, 'nobody has fetched or confirmed the key yet');
    assert.equal(body.uploads_paused, false);
    assert.deepEqual(body.upload_circuit, { state: 'closed', consecutive_failures: 0, retry_at: null });
    assert.equal(body.run_now_requested, false);
    assert.equal(body.scheduler.state, 'idle');
    assert.equal(body.scheduler.cron_schedule, TEST_CRON);
    assert.match(body.scheduler.next_run_at ?? 'null', ISO);
    const next = Date.parse(body.scheduler.next_run_at ?? '');
    assert.ok(next > Date.now(), 'next_run_at lies in the future');
    assert.equal(new Date(next).toISOString().slice(5), '02-29T00:00:00.000Z', 'the next leap-day midnight');
    assert.equal(body.scheduler.last_started_at, null);
    assert.equal(body.scheduler.last_finished_at, null);
    assert.equal(body.operation, null);
  });

  test('a read token sees the status without settings', async () => {
    const reply = await new Client(scout.url).get('/api/status', { token: readToken });
    expectStatus(reply, 200);
    assert.equal('settings' in reply.body, false, 'a read token must not see settings');
    assert.match(reply.body.scout_instance_id, /^[0-9a-f]{16,}$/);
    assert.match(reply.body.key_fingerprint, HEX64);
    assert.equal(reply.body.scheduler.state, 'idle');
    assert.equal(reply.body.operation, null);
  });

  test('a read token may not run, cancel or pause', async () => {
    const anon = new Client(scout.url);
    const token = readToken;
    expectStatus(await anon.post('/api/run-now', undefined, { token }), 403, /backup/);
    expectStatus(await anon.post('/api/cancel-operation', undefined, { token }), 403, /backup/);
    expectStatus(await anon.post('/api/uploads/pause', undefined, { token }), 403, /backup/);
    expectStatus(await anon.get('/api/settings', { token }), 403, /manage/);
    expectStatus(await anon.get('/api/status'), 401);
  });
});

describe('schedule', () => {
  test('a new cron_schedule changes the scheduler and its next run', async () => {
    const before = await status();
    const saved = await admin.post('/api/settings', { cron_schedule: '*/5 * * * *' });
    expectStatus(saved, 200);
    assert.equal(saved.body.settings?.cron_schedule, '*/5 * * * *');
    const after = await status();
    assert.equal(after.scheduler.cron_schedule, '*/5 * * * *');
    assert.equal(after.settings?.cron_schedule, '*/5 * * * *');
    const next = Date.parse(after.scheduler.next_run_at ?? '');
    assert.ok(next > Date.now(), 'next_run_at lies in the future');
    assert.ok(next <= Date.now() + 5 * 60_000 + 1000, `within five minutes: ${after.scheduler.next_run_at}`);
    assert.equal(new Date(next).getUTCMinutes() % 5, 0);
    assert.ok(next <= Date.parse(before.scheduler.next_run_at ?? ''));
  });

  test('a bad cron expression is a 400 and changes nothing', async () => {
    const before = await status();
    for (const cron of ['not a cron', '61 * * * *', '* * *', 5]) {
      const reply = await admin.post('/api/settings', { cron_schedule: cron });
      expectStatus(reply, 400, /cron_schedule/);
    }
    const after = await status();
    assert.equal(after.scheduler.cron_schedule, '*/5 * * * *');
    assert.equal(after.settings?.cron_schedule, '*/5 * * * *');
    assert.equal(after.scheduler.next_run_at, before.scheduler.next_run_at);
    const settings = await admin.get('/api/settings');
    expectStatus(settings, 200);
    assert.equal(settings.body.settings?.cron_schedule, '*/5 * * * *');
  });
});

describe('run-now without a Station', () => {
  test('queued; the job fails naming station_url and scout_credential, its archive staged', async () => {
    await runNow(admin, POLL);
    const state = await jobState(admin, 'docs');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /station_url/);
    assert.match(String(state.last_error), /scout_credential/);
    assert.equal(state.staged, true);
    assert.match(String(state.last_attempt_at), ISO);
    assert.equal(state.last_stored_as, null);
    const body = await status();
    assert.match(String(body.scheduler.last_started_at), ISO);
    assert.match(String(body.scheduler.last_finished_at), ISO);
    assert.ok(
      Date.parse(String(body.scheduler.last_finished_at)) >=
        Date.parse(String(body.scheduler.last_started_at)),
    );
    assert.equal(body.run_now_requested, false);
    assert.equal(body.scheduler.state, 'idle');
    assert.deepEqual(body.upload_circuit, { state: 'closed', consecutive_failures: 0, retry_at: null });
    const archives = staging().filter((f) => f.startsWith('docs-') && f.endsWith('.tar.zst'));
    assert.equal(archives.length, 1, 'one staged archive');
  });

  test('a second cycle reuses the staged archive', async () => {
    const before = staging().filter((f) => f.startsWith('docs-'));
    await runNow(admin, POLL);
    assert.deepEqual(
      staging().filter((f) => f.startsWith('docs-')),
      before,
    );
    assert.equal((await jobState(admin, 'docs')).staged, true);
  });

  test('clear-staged discards the staged archive and the error', async () => {
    const reply = await admin.post('/api/directories/clear-staged', { relative_path: 'docs' });
    expectStatus(reply, 200);
    assert.equal(reply.body.cleared, true);
    const state = await jobState(admin, 'docs');
    assert.equal(state.staged, false);
    assert.equal(state.last_error, null);
    assert.deepEqual(
      staging().filter((f) => f.startsWith('docs-')),
      [],
    );
  });

  test('cancel when idle answers idle; force-send of an unknown job is 404', async () => {
    const cancel = await admin.post('/api/cancel-operation');
    expectStatus(cancel, 200);
    assert.equal(cancel.body.status, 'idle');
    expectStatus(await admin.post('/api/directories/force-send', { relative_path: 'nope' }), 404, /nope/);
    expectStatus(await admin.post('/api/directories/force-send', {}), 400, /relative_path/);
  });
});

describe('uploads pause', () => {
  test('pause and resume show in status; a cycle while paused fails and keeps its archive', async () => {
    const paused = await admin.post('/api/uploads/pause');
    expectStatus(paused, 200);
    assert.equal((await status()).uploads_paused, true);
    await runNow(admin, POLL);
    const state = await jobState(admin, 'docs');
    assert.equal(state.last_status, 'failed');
    assert.match(String(state.last_error), /uploads are paused/);
    assert.equal(state.staged, true);
    const resumed = await admin.post('/api/uploads/resume');
    expectStatus(resumed, 200);
    assert.equal((await status()).uploads_paused, false);
  });
});

describe('a running cycle', () => {
  test('run-now again is already_running, rotate is 409, cancel stops it cleanly', async () => {
    mkdirSync(join(scanRoot, 'big'));
    // 256 MiB that zstd cannot shrink (a 4 MiB random block repeats beyond its window), so the
    // archive is still being written when the cancel arrives, however fast the machine.
    const block = randomBytes(4 * 1024 * 1024);
    writeFileSync(join(scanRoot, 'big', 'noise.bin'), Buffer.concat(Array.from({ length: 64 }, () => block)));
    expectStatus(await admin.post('/api/directories/save-job', { relative_path: 'big', config: {} }), 200);
    const first = await admin.post('/api/run-now');
    expectStatus(first, 200);
    assert.equal(first.body.status, 'queued');
    let running: ScoutStatus | null = null;
    for (let i = 0; i < 2000; i += 1) {
      const body = await status();
      if (body.operation?.kind === 'cycle' && body.operation.job_name === 'big') {
        running = body;
        break;
      }
      await sleep(5);
    }
    assert.ok(running, 'the cycle was seen working on the big job');
    assert.equal(running.scheduler.state, 'running');
    assert.match(String(running.operation?.started_at), ISO);
    assert.equal(typeof running.operation?.phase, 'string');
    assert.equal(typeof running.operation?.bytes_done, 'number');
    assert.equal(typeof running.operation?.bytes_total, 'number');

    const second = await admin.post('/api/run-now');
    expectStatus(second, 200);
    assert.equal(second.body.status, 'already_running');
    const forced = await admin.post('/api/directories/force-send', { relative_path: 'docs' });
    expectStatus(forced, 200);
    assert.equal(forced.body.status, 'already_running');
    expectStatus(await admin.post('/api/encryption-key/rotate'), 409, /operation/);
    assert.equal((await status()).run_now_requested, false, 'nothing extra was scheduled');

    const cancel = await admin.post('/api/cancel-operation');
    expectStatus(cancel, 200);
    assert.equal(cancel.body.status, 'cancelling');
    const during = await status();
    if (during.operation !== null) assert.equal(during.scheduler.state, 'cancelling');
    const idle = await waitIdle(admin, POLL);
    assert.equal(idle.scheduler.state, 'idle');
    assert.equal(idle.scheduler.last_started_at, running.scheduler.last_started_at, 'no second cycle ran');
    const state = await jobState(admin, 'big');
    assert.equal(state.last_status, 'cancelled', state.last_error ?? undefined);
    assert.equal(typeof state.last_error, 'string');
    assert.deepEqual(
      staging().filter((f) => f.endsWith('.part')),
      [],
      'no partial archive is left in staging',
    );
    expectStatus(await admin.post('/api/directories/delete-job', { relative_path: 'big' }), 200);
  });
});

describe('Scout key', () => {
  test('GET /api/encryption-key returns the key in every form; admin only', async () => {
    const reply = await admin.get('/api/encryption-key');
    expectStatus(reply, 200);
    assert.match(reply.body.fingerprint, HEX64);
    assert.equal(reply.body.fingerprint, (await status()).key_fingerprint);
    assert.match(reply.body.key_base64, /^[A-Za-z0-9_-]{43}$/, 'unpadded base64url of 32 bytes');
    assert.match(reply.body.age_identity, /^AGE-SECRET-KEY-1[0-9A-Z]+$/);
    assert.match(reply.body.age_recipient, /^age1[0-9a-z]+$/);
    const anon = new Client(scout.url);
    expectStatus(await anon.get('/api/encryption-key', { token: readToken }), 403, /manage/);
    expectStatus(await anon.post('/api/encryption-key/rotate', undefined, { token: readToken }), 403);
    expectStatus(await anon.get('/api/encryption-key'), 401);
  });

  test('the key file is private (0600) and holds the key', () => {
    const path = join(scout.dataDir, 'scout-key');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.match(readFileSync(path, 'utf8').trim(), /^[A-Za-z0-9_-]{43}$/);
  });

  test('rotate makes a new key, keeps the old one in the keyring and shows in status', async () => {
    const old = (await admin.get('/api/encryption-key')).body;
    const reply = await admin.post('/api/encryption-key/rotate');
    expectStatus(reply, 200);
    assert.match(reply.body.new_fingerprint, HEX64);
    assert.notEqual(reply.body.new_fingerprint, old.fingerprint);
    assert.match(reply.body.key_base64, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(reply.body.key_base64, old.key_base64);
    assert.equal((await status()).key_fingerprint, reply.body.new_fingerprint);
    const now = (await admin.get('/api/encryption-key')).body;
    assert.equal(now.fingerprint, reply.body.new_fingerprint);
    assert.equal(now.key_base64, reply.body.key_base64);
    const retired = join(scout.dataDir, 'keyring', old.fingerprint);
    assert.equal(readFileSync(retired, 'utf8').trim(), old.key_base64);
    assert.equal(statSync(retired).mode & 0o777, 0o600);
    const current = join(scout.dataDir, 'scout-key');
    assert.equal(readFileSync(current, 'utf8').trim(), reply.body.key_base64);
    assert.equal(statSync(current).mode & 0o777, 0o600);
  });
});

describe('key_saved_at', () => {
  test('set by fetching the key or confirming its fingerprint; a rotation asks again', async () => {
    assert.match(String((await status()).key_saved_at), ISO, 'the key was fetched above');
    expectStatus(await admin.post('/api/encryption-key/rotate'), 200);
    const fresh = await status();
    assert.equal(fresh.key_saved_at, null, 'the new key has no copy yet');
    const wrong = await admin.post('/api/encryption-key/confirm', { fingerprint: 'a'.repeat(64) });
    expectStatus(wrong, 400, /not the current Scout key/);
    expectStatus(await admin.post('/api/encryption-key/confirm', {}), 400, /fingerprint is required/);
    const anon = new Client(scout.url);
    const body = { fingerprint: fresh.key_fingerprint };
    expectStatus(await anon.post('/api/encryption-key/confirm', body, { token: readToken }), 403);
    assert.equal((await status()).key_saved_at, null);
    const confirmed = await admin.post('/api/encryption-key/confirm', {
      fingerprint: ` ${fresh.key_fingerprint.toUpperCase()} `,
    });
    expectStatus(confirmed, 200);
    assert.match(confirmed.body.key_saved_at, ISO);
    assert.equal((await status()).key_saved_at, confirmed.body.key_saved_at);
    await admin.get('/api/encryption-key');
    assert.equal((await status()).key_saved_at, confirmed.body.key_saved_at, 'the first copy counts');
  });
});

describe('restart', () => {
  test('the instance ID, the key and the schedule survive a restart', async () => {
    const before = await status();
    scout = await scout.restart();
    admin = await adminClient(scout.url);
    const after = await status();
    assert.equal(after.scout_instance_id, before.scout_instance_id);
    assert.equal(after.key_fingerprint, before.key_fingerprint);
    assert.equal(after.scheduler.cron_schedule, '*/5 * * * *');
    assert.equal(after.operation, null);
    assert.deepEqual(after.upload_circuit, { state: 'closed', consecutive_failures: 0, retry_at: null });
  });
});
