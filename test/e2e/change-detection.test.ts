// What a cycle backs up, on a real Station and a real Scout (issue #26): an archive staged by an
// earlier cycle goes first, and the job is checked again in the same cycle, so the newest
// snapshot holds what changed since; a job unchanged for force_send_every_days gets a fresh
// snapshot (both clocks moved); the marker's change_detection is checked and shown.
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../src/core/clock.ts';
import { newestSnapshotEntries } from '../helpers/archives.ts';
import { buildTree } from '../helpers/files.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { connectScout, jobState, runNow, snapshotsOf, startScout, startStation } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);

describe('what a cycle backs up', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let scanRoot: string;
  let credential = '';

  before(async () => {
    [{ server: station, admin: stationAdmin }, { server: scout, admin: scoutAdmin, scanRoot }] =
      await Promise.all([
        startStation(),
        startScout({
          fill: (scan) => buildTree(scan, { 'docs/.upload_dir': '', 'docs/a.txt': 'alpha' }),
        }),
      ]);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
  });

  async function newestEntries(job: string): Promise<string[]> {
    const status = (await scoutAdmin.get('/api/status')).body;
    const key = (await scoutAdmin.get('/api/encryption-key')).body;
    return newestSnapshotEntries({
      stationUrl: station.url,
      credential,
      scout: { ...status, age_identity: key.age_identity },
      job,
    });
  }

  test('a waiting archive is uploaded, then what changed since, in one run-now', async () => {
    // The first attempt has no Station yet: the archive stays staged and says when it was made.
    await runNow(scoutAdmin);
    const waiting = await jobState(scoutAdmin, 'docs');
    assert.equal(waiting.last_status, 'failed');
    assert.equal(waiting.staged, true);
    const stagedAt = (waiting as unknown as { staged_at: string | null }).staged_at;
    assert.ok(stagedAt && !Number.isNaN(Date.parse(stagedAt)), `staged_at is a time: ${stagedAt}`);

    credential = await connectScout(scoutAdmin, stationAdmin, 'change-host');
    writeFileSync(join(scanRoot, 'docs', 'new.bin'), Buffer.alloc(70_000, 7));
    await runNow(scoutAdmin);

    const done = await jobState(scoutAdmin, 'docs');
    assert.equal(done.last_status, 'uploaded', done.last_error ?? undefined);
    assert.equal(done.staged, false);
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2, 'the waiting archive and a new one');
    assert.deepEqual((await newestEntries('docs')).sort(), ['a.txt', 'new.bin']);

    // Nothing changed since: the next run-now makes no third snapshot.
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2);
  });

  /** Saves every Scout setting as it is, with `changes`. */
  async function setting(changes: Record<string, unknown>): Promise<void> {
    const { settings } = (await scoutAdmin.get('/api/settings')).body;
    const reply = await scoutAdmin.post('/api/settings', { ...settings, ...changes });
    assert.equal(reply.status, 200, reply.text);
  }

  /**
   * Moves the Scout's and the Station's clocks (the Station refuses snapshot times ahead of its
   * own) and signs in again (idle sessions end).
   */
  async function advanceDays(days: number): Promise<void> {
    scout.advanceClock(days * DAY_MS);
    station.advanceClock(days * DAY_MS);
    [scoutAdmin, stationAdmin] = await Promise.all([adminClient(scout.url), adminClient(station.url)]);
  }

  test('force_send_every_days: an unchanged job gets a fresh snapshot once its newest is that old', async () => {
    const defaults = (await scoutAdmin.get('/api/settings')).body.settings;
    assert.equal(defaults.force_send_every_days, 7, 'the default');
    const bad = await scoutAdmin.post('/api/settings', { ...defaults, force_send_every_days: -1 });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail, /force_send_every_days must be 0 \(never\) or more days/);
    await setting({ force_send_every_days: 2 });

    await advanceDays(1);
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged', 'one day old: not yet');
    await advanceDays(1.5);
    await runNow(scoutAdmin);
    const fresh = await jobState(scoutAdmin, 'docs');
    assert.equal(fresh.last_status, 'uploaded', fresh.last_error ?? undefined);
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 3, 'a fresh snapshot, files unchanged');
    const taken = (fresh as unknown as { last_snapshot_at: string }).last_snapshot_at;
    assert.ok(Math.abs(Date.parse(taken) - (Date.now() + 2.5 * DAY_MS)) < 120_000, taken);
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged', 'and then not again');

    await setting({ force_send_every_days: 0 });
    await advanceDays(30);
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged', '0: never forced');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 3);
    await setting({ force_send_every_days: 7 });
  });

  test('change_detection in the marker is checked, and shown in the job config', async () => {
    const wrong = await scoutAdmin.post('/api/directories/save-job', {
      relative_path: 'docs',
      config: { change_detection: 'content' },
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.detail, /change_detection must be sizes .* or mtimes/);
    writeFileSync(join(scanRoot, 'docs', '.upload_dir'), 'change_detection: hashes\n');
    await runNow(scoutAdmin); // a cycle searches the scan root again
    const listed = (await scoutAdmin.get('/api/directories')).body.directories;
    const docs = listed.find((d: { relative_path: string }) => d.relative_path === 'docs');
    assert.match(String(docs.config_error), /change_detection must be sizes/);
    const saved = await scoutAdmin.post('/api/directories/save-job', {
      relative_path: 'docs',
      config: { change_detection: 'mtimes' },
    });
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.body.directory.config.change_detection, 'mtimes');
    writeFileSync(join(scanRoot, 'docs', '.upload_dir'), '');
    await runNow(scoutAdmin);
    const plain = (await scoutAdmin.get('/api/directories')).body.directories;
    assert.equal(
      plain.find((d: { relative_path: string }) => d.relative_path === 'docs').config.change_detection,
      'sizes',
    );
  });

  test('a same-size edit makes a new snapshot on a normal cycle with change_detection: mtimes, not with sizes', async () => {
    const file = join(scanRoot, 'docs', 'a.txt');
    const count = async () => (await snapshotsOf(stationAdmin, 'docs')).length;
    await runNow(scoutAdmin); // whatever is due (the clocks moved above) is done first
    const before = await count();

    writeFileSync(file, 'ALPHA');
    utimesSync(file, new Date('2030-01-02T03:04:05Z'), new Date('2030-01-02T03:04:05Z'));
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged', 'sizes: not seen');
    assert.equal(await count(), before);

    const saved = await scoutAdmin.post('/api/directories/save-job', {
      relative_path: 'docs',
      config: { change_detection: 'mtimes' },
    });
    assert.equal(saved.status, 200, saved.text);
    await runNow(scoutAdmin); // the marker changed: one snapshot
    assert.equal(await count(), before + 1);
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged', 'mtimes: nothing changed');

    writeFileSync(file, 'alpha');
    utimesSync(file, new Date('2030-01-03T03:04:05Z'), new Date('2030-01-03T03:04:05Z'));
    await runNow(scoutAdmin);
    const state = await jobState(scoutAdmin, 'docs');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? 'the same-size edit is backed up');
    assert.equal(await count(), before + 2);
  });
});
