// Snapshot order by the snapshot's own time, `retention_keep_within_days` and the snapshot list
// for Scouts (docs/extensions.md: Snapshot order, Retention; docs/protocol.md: Recovery;
// issue #16 items 1, 2 and 4). Runs on PGlite and on
// PostgreSQL (see the two runner files).
//
// One Station, shared by the tests, which run in order; every test uses its own Scout. The
// clock only moves forward, in the last test.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DAY_MS, HOUR_MS } from '../../../src/core/clock.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { adminClient, type Client } from '../../helpers/http.ts';
import { CALENDAR_OFF } from '../../helpers/retention.ts';
import { runBackupd, type TestServer } from '../../helpers/server.ts';
import { type ArchiveMeta, archiveMeta, call, initiate, upload } from '../../helpers/uploads.ts';

export type StartStation = () => Promise<TestServer>;

interface Listed {
  filename: string;
  timestamp: string;
  size_bytes: number;
  fingerprint: string;
}

/** A fixed day well in the past, plus `minutes`. */
const past = (minutes: number) => utcSecond(Date.UTC(2026, 9, 1, 8, 0, 0) + minutes * 60_000);
const fp = (n: number) => `${n.toString(16).padStart(2, '0')}`.repeat(32);
const nameOf = (meta: ArchiveMeta) =>
  `${meta.job_name}__${meta.timestamp.replaceAll(':', '-')}__${meta.fingerprint.slice(0, 8)}.tar.zst`;

let counter = 0;
const uniqueScout = (prefix: string) => {
  counter += 1;
  return `${prefix}-${counter}`;
};

export function snapshotOrderSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    /** Server time as the Station sees it (real time plus the offsets the tests added). */
    let offset = 0;
    const stationNow = () => Date.now() + offset;
    /** The job of the first test: three snapshots, newest first. */
    let ordered: { token: string; scout: string; inst: string; names: string[] } | undefined;

    before(async () => {
      station = await start();
      admin = await adminClient(station.url);
    });

    after(async () => {
      await station?.dispose();
    });

    async function mint(): Promise<string> {
      const reply = await admin.post('/api/credentials/mint', {});
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      return reply.body.credential;
    }

    async function settings(body: Record<string, unknown>) {
      const reply = await admin.post('/api/settings', body);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body.settings;
    }

    /** Uploads one small snapshot of `scout`/`inst`/docs; returns its meta and finalize reply. */
    async function store(token: string, scout: string, inst: string, timestamp: string, fingerprint = fp(1)) {
      const data = randomBytes(600 + Math.floor(Math.random() * 200));
      const meta = archiveMeta(data, {
        scout_id: scout,
        scout_instance_id: inst,
        job_name: 'docs',
        timestamp,
        fingerprint,
      });
      const done = await upload(station.url, token, data, meta);
      assert.equal(done.initiate.status, 200, JSON.stringify(done.initiate.body));
      assert.ok(done.finalize, 'finalized');
      assert.equal(done.finalize.status, 200, JSON.stringify(done.finalize.body));
      assert.equal(done.finalize.body.stored_as, nameOf(meta));
      return { meta, size: data.length, pruned: done.finalize.body.pruned as string[] };
    }

    const list = (token: string, scout: string, inst: string) =>
      call(station.url, 'GET', `/backup/recovery/${scout}/${inst}/docs/snapshots`, token);

    async function listed(token: string, scout: string, inst: string): Promise<Listed[]> {
      const reply = await list(token, scout, inst);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body.snapshots;
    }

    async function downloadedName(token: string, path: string): Promise<string | null> {
      const res = await fetch(`${station.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200, `${path}: ${res.status} ${await res.clone().text()}`);
      await res.arrayBuffer();
      return res.headers.get('x-relay-snapshot-filename');
    }

    test('an older snapshot uploaded last does not become latest; by-fingerprint and the list follow the timestamp', async () => {
      const token = await mint();
      const scout = uniqueScout('order');
      const inst = randomBytes(8).toString('hex');
      const middle = await store(token, scout, inst, past(20), fp(0xa1));
      const newest = await store(token, scout, inst, past(30), fp(0xb2));
      const oldest = await store(token, scout, inst, past(10), fp(0xa1)); // arrives last

      const base = `/backup/recovery/${scout}/${inst}/docs`;
      assert.equal(await downloadedName(token, `${base}/latest`), nameOf(newest.meta));
      assert.equal(
        await downloadedName(token, `${base}/by-fingerprint?fp=${fp(0xa1).slice(0, 8)}`),
        nameOf(middle.meta),
        'the newest match by timestamp, not the last to arrive',
      );
      ordered = { token, scout, inst, names: [newest, middle, oldest].map((s) => nameOf(s.meta)) };
      assert.deepEqual(await listed(token, scout, inst), [
        {
          filename: nameOf(newest.meta),
          timestamp: past(30),
          size_bytes: newest.size,
          fingerprint: fp(0xb2),
        },
        {
          filename: nameOf(middle.meta),
          timestamp: past(20),
          size_bytes: middle.size,
          fingerprint: fp(0xa1),
        },
        {
          filename: nameOf(oldest.meta),
          timestamp: past(10),
          size_bytes: oldest.size,
          fingerprint: fp(0xa1),
        },
      ]);
    });

    test("backupd scout restore --list prints the job's snapshots newest first and exits; needs no key or --dest", async () => {
      assert.ok(ordered, 'the first test ran');
      const { token, scout, inst, names } = ordered;
      const args = ['scout', 'restore', '--list', '--job', 'docs', '--station-url', station.url];
      const ids = ['--scout-id', scout, '--instance-id', inst];
      const listedRun = await runBackupd([...args, '--token', token, ...ids]);
      assert.equal(listedRun.code, 0, listedRun.stderr);
      const lines = listedRun.stdout.trimEnd().split('\n');
      assert.deepEqual(
        lines.map((line) => line.split(/\s+/).at(-1)),
        names,
        listedRun.stdout,
      );
      assert.match(lines[0] ?? '', /^2026-10-01T08:30:00Z\s+\d+ B\s+b2b2b2b2\s+docs__/);
      assert.match(listedRun.stderr, /--file FILENAME/);

      const refused = await runBackupd([...args, '--token', await mint(), ...ids]);
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stderr, /may not recover/);
      assert.equal(refused.stdout, '');
    });

    test('the snapshot list: a token bound to another instance is 403, no token 401, an empty job []', async () => {
      const token = await mint();
      const scout = uniqueScout('list');
      const inst = randomBytes(8).toString('hex');
      await store(token, scout, inst, past(5));
      const other = await mint();
      await store(other, uniqueScout('list-other'), randomBytes(8).toString('hex'), past(5));

      const refused = await list(other, scout, inst);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(refused.body.detail, /not bound to .*recovery token/);
      const unbound = await list(await mint(), scout, inst);
      assert.equal(unbound.status, 403, JSON.stringify(unbound.body));
      const anonymous = await fetch(`${station.url}/backup/recovery/${scout}/${inst}/docs/snapshots`);
      assert.equal(anonymous.status, 401);
      const empty = await call(
        station.url,
        'GET',
        `/backup/recovery/${scout}/${inst}/photos/snapshots`,
        token,
      );
      assert.equal(empty.status, 200, JSON.stringify(empty.body));
      assert.deepEqual(empty.body, { snapshots: [] });
      const bad = await call(station.url, 'GET', `/backup/recovery/${scout}/${inst}/..%2Fx/snapshots`, token);
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
    });

    test('retention prunes the oldest by timestamp, not the first to arrive', async () => {
      await settings({ ...CALENDAR_OFF, retention_keep_last: 3 });
      try {
        const token = await mint();
        const scout = uniqueScout('retention');
        const inst = randomBytes(8).toString('hex');
        const t3 = await store(token, scout, inst, past(30));
        const t1 = await store(token, scout, inst, past(10));
        const t2 = await store(token, scout, inst, past(20));
        assert.deepEqual(t2.pruned, []);
        const t4 = await store(token, scout, inst, past(40));
        assert.deepEqual(
          t4.pruned,
          [nameOf(t1.meta)],
          'the oldest by timestamp goes, though it arrived second',
        );
        assert.deepEqual(
          (await listed(token, scout, inst)).map((s) => s.filename),
          [t4, t3, t2].map((s) => nameOf(s.meta)),
        );
        // A late snapshot older than all kept ones stays until the next upload, then goes first.
        const t0 = await store(token, scout, inst, past(0));
        assert.deepEqual(t0.pruned, [], 'the snapshot just stored is never pruned by its own upload');
        const t5 = await store(token, scout, inst, past(50));
        assert.deepEqual(t5.pruned, [nameOf(t2.meta), nameOf(t0.meta)]);
      } finally {
        await settings({});
      }
    });

    test('retention_keep_within_days: validated, shown in the settings, default 0', async () => {
      const shown = await admin.get('/api/overview?section=settings');
      assert.equal(shown.status, 200);
      assert.equal(shown.body.settings.retention_keep_within_days, 0);
      for (const value of [-1, 1.5, '7', 36_501]) {
        const reply = await admin.post('/api/settings', { retention_keep_within_days: value });
        assert.equal(reply.status, 400, `${JSON.stringify(value)}: ${JSON.stringify(reply.body)}`);
        assert.match(reply.body.detail, /retention_keep_within_days/);
      }
      const saved = await settings({ retention_keep_last: 4, retention_keep_within_days: 10 });
      assert.equal(saved.retention_keep_last, 4);
      assert.equal(saved.retention_keep_within_days, 10);
      const reset = await settings({});
      assert.equal(
        reset.retention_keep_last,
        30,
        'RETENTION_KEEP_LAST of test Stations (test/helpers/server.ts)',
      );
      assert.equal(reset.retention_keep_within_days, 0);
    });

    test('an initiation more than 24 hours ahead of the Station clock is 400; 23 hours is accepted', async () => {
      const token = await mint();
      const scout = uniqueScout('ahead');
      const inst = randomBytes(8).toString('hex');
      const data = randomBytes(100);
      const meta = (ms: number) =>
        archiveMeta(data, {
          scout_id: scout,
          scout_instance_id: inst,
          job_name: 'docs',
          timestamp: utcSecond(ms),
        });
      const ahead = await initiate(station.url, token, meta(stationNow() + 25 * HOUR_MS));
      assert.equal(ahead.status, 400, JSON.stringify(ahead.body));
      assert.match(
        ahead.body.detail,
        /more than 24 hours ahead of the Station's clock.*check the Scout's clock/,
      );
      const skewed = await initiate(station.url, token, meta(stationNow() + 23 * HOUR_MS));
      assert.equal(skewed.status, 200, JSON.stringify(skewed.body));
    });

    test('a flood of uploads inside retention_keep_within_days prunes nothing inside it', async () => {
      await settings({ ...CALENDAR_OFF, retention_keep_last: 2, retention_keep_within_days: 7 });
      try {
        const token = await mint();
        const scout = uniqueScout('flood');
        const inst = randomBytes(8).toString('hex');
        const old20 = await store(token, scout, inst, utcSecond(stationNow() - 20 * DAY_MS));
        const old15 = await store(token, scout, inst, utcSecond(stationNow() - 15 * DAY_MS));
        // The window counts by the time the Station stored a snapshot: ten days on, these two
        // are outside it.
        station.advanceClock(10 * DAY_MS);
        offset += 10 * DAY_MS;
        admin = await adminClient(station.url); // sessions last 7 days
        const now = stationNow();
        const pruned: string[] = [];
        const flood = [];
        for (let i = 0; i < 8; i += 1) {
          const done = await store(token, scout, inst, utcSecond(now - 6 * DAY_MS + i * HOUR_MS));
          pruned.push(...done.pruned);
          flood.push(done);
        }
        assert.deepEqual(
          pruned,
          [nameOf(old20.meta)],
          'only snapshots outside the window; old15 stays today (today’s uploads count as one for what came before)',
        );
        assert.deepEqual(
          (await listed(token, scout, inst)).map((s) => s.filename),
          [...flood.map((s) => nameOf(s.meta)).reverse(), nameOf(old15.meta)],
          'all eight inside the window kept though retention_keep_last is 2',
        );

        // Eight days later the flood has left the window: the next upload prunes down to 2.
        station.advanceClock(8 * DAY_MS);
        offset += 8 * DAY_MS;
        admin = await adminClient(station.url); // sessions last 7 days
        const later = await store(token, scout, inst, utcSecond(stationNow() - HOUR_MS));
        assert.deepEqual(later.pruned, [
          ...flood
            .slice(0, 7)
            .map((s) => nameOf(s.meta))
            .reverse(),
          nameOf(old15.meta),
        ]);
        assert.deepEqual(
          (await listed(token, scout, inst)).map((s) => s.filename),
          [nameOf(later.meta), nameOf((flood[7] as (typeof flood)[number]).meta)],
        );
      } finally {
        await settings({});
      }
    });
  });
}
