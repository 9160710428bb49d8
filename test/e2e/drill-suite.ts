// Restore drills end to end: a real Station and a real Scout. A drill reads the newest snapshot
// of a job to the end and checks it against the job fingerprint, writing nothing into the job;
// one on a snapshot damaged on the Station fails (state, Station record, notifications); one
// cancelled half-way records nothing and lets the next operation run.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DrillOutcome } from '../../src/shared/protocol/drills.ts';
import type { ScoutStatus } from '../../src/shared/protocol/scout-status.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import {
  connectScout,
  jobState,
  mintStationToken,
  runNow,
  scoutDataDir,
  scoutStatus,
  waitIdle,
} from '../helpers/scout.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BIG = 32 * 1024 * 1024;
/** A loaded machine (other suites beside this one) starts servers slowly. */
export const READY_MS = 180_000;

type Drill = DrillOutcome;

/** Every path under `dir` with its size and mtime: what a drill must leave as it is. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((d) => {
      const path = join(d.parentPath, d.name);
      const s = statSync(path, { throwIfNoEntry: false });
      return `${path} ${s?.size} ${s?.mtimeMs}`;
    })
    .sort();
}

/** The stored file of `filename` under the Station's snapshot folder. */
function storedFile(station: TestServer, filename: string): string {
  const root = join(station.dataDir, 'snapshots');
  const found = readdirSync(root, { recursive: true, withFileTypes: true }).find(
    (d) => d.isFile() && d.name === filename,
  );
  assert.ok(found, `${filename} is stored under ${root}`);
  return join(found.parentPath, found.name);
}

export function drillSuite(label: string, start: () => Promise<TestServer>): void {
  describe(label, { skip: skipUnlessPrograms(['tar']) }, () => {
    let station: TestServer;
    let stationAdmin: Client;
    let scout: TestServer;
    let admin: Client;
    let scan: string;
    let inbox: Receiver;
    let scoutId = '';
    let instance = '';
    let docsSnapshot = '';
    let credential = '';

    before(async () => {
      inbox = await startReceiver();
      station = await start();
      stationAdmin = await adminClient(station.url);
      const dirs = scoutDataDir('backupd-drill-');
      scan = dirs.scanRoot;
      buildTree(join(scan, 'docs'), {
        '.upload_dir': '',
        'a.txt': 'first',
        'sub/b.txt': 'second file',
        'sub/empty/': null,
        'sub/c.bin': Buffer.alloc(40_000, 7),
        link: '-> a.txt',
      });
      buildTree(join(scan, 'big'), { '.upload_dir': '', 'noise.bin': randomBytes(BIG) });
      scout = await startServer('scout', { dataDir: dirs.dataDir, readyTimeoutMs: READY_MS });
      admin = await adminClient(scout.url);
      scoutId = 'drill-scout';
      credential = await connectScout(admin, stationAdmin, scoutId);
      instance = (await scoutStatus(admin)).scout_instance_id;
      expectStatus(await admin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'scout' }), 200);
      expectStatus(await stationAdmin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'station' }), 200);
      await runNow(admin, { timeoutMs: 60_000 });
      const docs = await jobState(admin, 'docs');
      assert.equal(docs.last_status, 'uploaded', docs.last_error ?? undefined);
      docsSnapshot = String(docs.last_stored_as);
      assert.equal((await jobState(admin, 'big')).last_status, 'uploaded');
    });

    after(async () => {
      await scout?.dispose();
      await station?.dispose();
      await inbox?.close();
    });

    const lastDrill = async (path: string) =>
      ((await jobState(admin, path)) as unknown as { last_drill: Drill | null }).last_drill;

    /** The job's `last_drill` in the Station's overview. */
    async function stationDrill(job: string): Promise<Drill | null | undefined> {
      const overview = await stationAdmin.get('/api/overview');
      expectStatus(overview, 200);
      for (const s of overview.body.scouts ?? [])
        for (const i of s.instances ?? [])
          if (s.scout_id === scoutId && i.scout_instance_id === instance)
            for (const j of i.jobs ?? []) if (j.job_name === job) return j.last_drill ?? null;
      return undefined;
    }

    const notices = (topic: string) =>
      inbox.messages.filter((m) => m.url === `/${topic}` && /restore drill/i.test(String(m.headers.title)));

    test('a drill reads the newest snapshot to the end, matches its fingerprint and writes nothing', async () => {
      const before = listing(join(scan, 'docs'));
      const reply = await admin.post('/api/drills/run', { relative_path: 'docs' });
      expectStatus(reply, 200);
      assert.equal(reply.body.status, 'queued');
      await waitIdle(admin);
      const drill = await lastDrill('docs');
      assert.ok(drill, 'state.last_drill is set');
      assert.equal(drill.status, 'ok', drill.error ?? undefined);
      assert.equal(drill.filename, docsSnapshot);
      assert.equal(drill.files, 3, 'a.txt, sub/b.txt and sub/c.bin (the link is no file)');
      assert.equal(drill.bytes, 'first'.length + 'second file'.length + 40_000);
      assert.equal(drill.error, null);
      assert.ok(Math.abs(Date.parse(drill.finished_at) - Date.now()) < 120_000);
      assert.deepEqual(listing(join(scan, 'docs')), before, 'nothing was written into the job');
      assert.equal((await lastDrill('big')) ?? null, null, 'only the named job was drilled');
      assert.deepEqual(notices('scout'), [], 'a passing drill sends no notification');
      assert.deepEqual(await stationDrill('docs'), drill, "the Station's overview shows the same drill");
      assert.equal(await stationDrill('big'), null);
    });

    test('a drill of a snapshot damaged on the Station fails and says so', async () => {
      const file = storedFile(station, docsSnapshot);
      const size = statSync(file).size;
      const fd = openSync(file, 'r+');
      try {
        const at = Math.floor(size / 2);
        const byte = Buffer.alloc(1);
        readSync(fd, byte, 0, 1, at);
        writeSync(fd, Buffer.from([(byte[0] ?? 0) ^ 0xff]), 0, 1, at);
      } finally {
        closeSync(fd);
      }
      expectStatus(await admin.post('/api/drills/run', { relative_path: 'docs' }), 200);
      await waitIdle(admin);
      const drill = await lastDrill('docs');
      assert.ok(drill);
      assert.equal(drill.status, 'failed');
      assert.equal(drill.filename, docsSnapshot);
      assert.match(String(drill.error), /damaged|decrypt/);
      for (let i = 0; i < 1200 && notices('scout').length === 0; i += 1) await sleep(50);
      const [notice] = notices('scout');
      assert.ok(notice, 'the Scout sent a drill_failed notification');
      assert.match(notice.body, new RegExp(docsSnapshot.replace(/\./g, '\\.')));
      assert.deepEqual(await stationDrill('docs'), drill, 'the Station recorded the failed drill');
      for (let i = 0; i < 1200 && notices('station').length === 0; i += 1) await sleep(50);
      assert.equal(notices('station').length, 1, 'the Station sent a drill_failed notification too');
      assert.match(String(notices('station')[0]?.body), /could not be proven restorable/);
    });

    test('a drill cancelled half-way records nothing and never overlaps a backup', async () => {
      const reply = await admin.post('/api/drills/run', { relative_path: 'big' });
      expectStatus(reply, 200);
      assert.equal(reply.body.status, 'queued');
      let seen: ScoutStatus | null = null;
      for (let i = 0; i < 4000 && !seen; i += 1) {
        const status = await scoutStatus(admin);
        if (status.operation?.kind === 'drill' && status.operation.phase === 'drilling') seen = status;
        else if (status.operation === null) break;
      }
      assert.ok(seen, 'the drill was seen reading the snapshot');
      // The Station stops sending: the drill stays half-way through the snapshot.
      process.kill(station.pid, 'SIGSTOP');
      try {
        let done = -1;
        for (let i = 0; i < 50; i += 1) {
          await sleep(40);
          const now = (await scoutStatus(admin)).operation?.bytes_done ?? -1;
          if (now === done && now > 0) break;
          done = now;
        }
        const during = await scoutStatus(admin);
        assert.ok(during.operation);
        assert.equal(during.operation.kind, 'drill');
        assert.equal(during.operation.job_name, 'big');
        assert.ok(during.operation.bytes_done > 0, 'part of the snapshot was read');
        assert.ok(during.operation.bytes_done < during.operation.bytes_total, 'not all of it');
        const backup = await admin.post('/api/run-now');
        expectStatus(backup, 200);
        assert.equal(backup.body.status, 'already_running', 'no backup runs beside a drill');
        const again = await admin.post('/api/drills/run', {});
        expectStatus(again, 200);
        assert.equal(again.body.status, 'already_running');
        const cancel = await admin.post('/api/cancel-operation');
        expectStatus(cancel, 200);
        assert.equal(cancel.body.status, 'cancelling');
        await waitIdle(admin, { timeoutMs: 10_000 });
      } finally {
        process.kill(station.pid, 'SIGCONT');
      }
      assert.equal((await lastDrill('big')) ?? null, null, 'a cancelled drill proves nothing');
      assert.equal(notices('scout').length, 1, 'no notification for the cancelled drill');
      assert.equal(await stationDrill('big'), null);
    });

    test('the Station takes drill reports only from a bound token and with a valid body', async () => {
      const path = `/backup/drills/${scoutId}/${instance}/docs`;
      const report = {
        filename: docsSnapshot,
        status: 'ok',
        files: 1,
        bytes: 2,
        error: null,
        finished_at: new Date().toISOString(),
      };
      const post = (body: unknown, token?: string) =>
        fetch(`${station.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(body),
        });
      assert.equal((await post(report)).status, 401);
      const bad = await post({ ...report, status: 'great' }, credential);
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { detail: string }).detail, /status must be ok or failed/);
      const future = await post({ ...report, finished_at: 'yesterday' }, credential);
      assert.equal(future.status, 400);
      const other = await post(report, await mintStationToken(stationAdmin));
      assert.ok([403, 409].includes(other.status), `a token bound elsewhere is refused (${other.status})`);
      assert.equal(
        (await stationDrill('docs'))?.status,
        'failed',
        'nothing was recorded by the refused reports',
      );
      const drill = await admin.post('/api/drills/run', { relative_path: 'nowhere' });
      expectStatus(drill, 404, /no backup job/);
      expectStatus(await admin.post('/api/drills/run', { relative: 'docs' }), 400);
    });

    test('drill_schedule: a cron expression, Sundays 04:00 by default, empty for never', async () => {
      const wired = { station_url: station.url, scout_credential: credential, scout_id: scoutId };
      const current = await admin.get('/api/settings');
      expectStatus(current, 200);
      assert.equal(current.body.settings.drill_schedule, '0 4 * * 0');
      expectStatus(
        await admin.post('/api/settings', { ...wired, drill_schedule: 'weekly' }),
        400,
        /drill_schedule/,
      );
      const off = await admin.post('/api/settings', { ...wired, drill_schedule: '' });
      expectStatus(off, 200);
      assert.equal(off.body.settings.drill_schedule, '');
      assert.equal((await admin.get('/api/settings')).body.settings.drill_schedule, '');
      const daily = await admin.post('/api/settings', { ...wired, drill_schedule: '30 3 * * *' });
      expectStatus(daily, 200);
      assert.equal(daily.body.settings.drill_schedule, '30 3 * * *');
    });
  });
}
