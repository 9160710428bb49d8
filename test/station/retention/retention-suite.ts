// Calendar retention by arrival time, no flush, the hourly upload limit and protected snapshots
// (issue 25; docs/extensions.md, Retention). Runs on PGlite and on PostgreSQL (the two
// runner files). One Station with a new Station's defaults, shared by the tests, which run in
// order; the Station's clock only moves forward.
//
// The 400 days: one small snapshot a day, each day's clock step written to the clock file, so
// the Station stores each on its own day; the expected set is worked out here from the stored
// days with date strings, apart from src/station/retention/policy.ts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DAY_MS, HOUR_MS } from '../../../src/core/clock.ts';
import { utcSecond } from '../../../src/shared/protocol/fields.ts';
import { NEW_STATION_DEFAULTS } from '../../../src/station/retention/fields.ts';
import { adminClient, type Client, mintAutomationToken } from '../../helpers/http.ts';
import { sampleValue, scrape } from '../../helpers/metrics.ts';
import { type Receiver, settle, startReceiver } from '../../helpers/receiver.ts';
import { KEEP_NEWEST_ONLY } from '../../helpers/retention.ts';
import type { TestServer } from '../../helpers/server.ts';
import { archiveMeta, upload } from '../../helpers/uploads.ts';

export type StartStation = (env: Record<string, string>) => Promise<TestServer>;

const DAYS = 400;

interface Stored {
  name: string;
  storedAt: number;
  takenAt: number;
}

/** The default policy worked out by hand: last 3 by own time; first stored in each of the most recent 7 days, 5 ISO weeks, 12 months, 3 years. */
function expectedKept(stored: Stored[]): Set<string> {
  const kept = new Set<string>();
  for (const s of [...stored].sort((a, b) => b.takenAt - a.takenAt).slice(0, 3)) kept.add(s.name);
  const monday = (ms: number) => {
    const d = new Date(ms);
    d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
    return d.toISOString().slice(0, 10);
  };
  const periods: [number, (ms: number) => string][] = [
    [7, (ms) => new Date(ms).toISOString().slice(0, 10)],
    [5, monday],
    [12, (ms) => new Date(ms).toISOString().slice(0, 7)],
    [3, (ms) => new Date(ms).toISOString().slice(0, 4)],
  ];
  for (const [count, key] of periods) {
    const first = new Map<string, string>();
    for (const s of [...stored].sort((a, b) => a.storedAt - b.storedAt)) {
      if (!first.has(key(s.storedAt))) first.set(key(s.storedAt), s.name);
    }
    const recent = [...first.keys()].sort().reverse().slice(0, count);
    for (const period of recent) kept.add(first.get(period) as string);
  }
  return kept;
}

export function retentionSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    let offset = 0;
    const stationNow = () => Date.now() + offset;
    const move = (ms: number) => {
      station.advanceClock(ms);
      offset += ms;
    };
    const scout = 'host-r';
    const inst = randomBytes(8).toString('hex');
    const job = 'docs';
    let token = '';
    let inbox: Receiver;
    const labels = { scout_id: scout, scout_instance_id: inst, job_name: job };
    /** Every honest snapshot stored, in order. */
    const honest: Stored[] = [];

    before(async () => {
      // RETENTION_KEEP_LAST '' undoes the test Stations' 30: a new Station's defaults apply.
      [station, inbox] = await Promise.all([start({ RETENTION_KEEP_LAST: '' }), startReceiver()]);
      admin = await adminClient(station.url);
      const ntfy = await admin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'station' });
      assert.equal(ntfy.status, 200, ntfy.text);
      // Noon (UTC) of the next day: the day steps below stay far from midnight.
      const now = Date.now();
      move(Math.floor(now / DAY_MS) * DAY_MS + DAY_MS + 12 * HOUR_MS - now);
      const minted = await admin.post('/api/credentials/mint', { ttl_days: 3650 });
      assert.equal(minted.status, 201, minted.text);
      token = minted.body.credential;
    });

    after(async () => {
      await station?.dispose();
      await inbox?.close();
    });

    async function store(timestamp: number, size = 200) {
      const data = randomBytes(size);
      const meta = archiveMeta(data, {
        scout_id: scout,
        scout_instance_id: inst,
        job_name: job,
        timestamp: utcSecond(timestamp),
      });
      return upload(station.url, token, data, meta);
    }

    async function snapshots(): Promise<Array<{ name: string; stored_at: string; protected: boolean }>> {
      const reply = await admin.get('/api/overview?section=snapshots');
      assert.equal(reply.status, 200, reply.text);
      const found = reply.body.scouts
        .find((s: { scout_id: string }) => s.scout_id === scout)
        ?.instances.find((i: { scout_instance_id: string }) => i.scout_instance_id === inst)
        ?.jobs.find((j: { job_name: string }) => j.job_name === job);
      return found?.snapshots ?? [];
    }

    test("a new Station's policy: last 3, daily 7, weekly 5, monthly 12, yearly 3, 12 uploads an hour", async () => {
      const reply = await admin.get('/api/overview?section=settings');
      // The retention fields (the settings also hold the replica's replication_*).
      const retention = Object.fromEntries(
        Object.entries(reply.body.settings).filter(([name]) => name.startsWith('retention_')),
      );
      // The rule is src/station/retention/fields.ts; the migration test pins its numbers.
      assert.deepEqual(retention, NEW_STATION_DEFAULTS);
    });

    test('one snapshot a day for 400 days keeps exactly what the default policy says', async () => {
      for (let day = 0; day < DAYS; day += 1) {
        if (day > 0) move(DAY_MS);
        const storedAt = stationNow();
        const done = await store(storedAt - HOUR_MS);
        assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body ?? done.initiate.body));
        honest.push({ name: done.finalize?.body.stored_as, storedAt, takenAt: storedAt - HOUR_MS });
      }
      admin = await adminClient(station.url); // sessions last 7 days
      const listed = await snapshots();
      const expected = expectedKept(honest);
      assert.deepEqual(listed.map((s) => s.name).sort(), [...expected].sort());
      // 3 last (inside the 7 days), 7 days, the weeks and months before them, 2 more years' firsts.
      assert.ok(expected.size >= 20 && expected.size <= 27, `${expected.size} kept`);
      // Each listed snapshot shows when the Station stored it.
      const storedDay = new Map(honest.map((h) => [h.name, new Date(h.storedAt).toISOString().slice(0, 10)]));
      for (const s of listed) assert.equal(s.stored_at.slice(0, 10), storedDay.get(s.name));
    });

    test('500 junk uploads with the same token delete nothing stored before them; beyond 12 an hour they are refused', async () => {
      const before = (await snapshots()).map((s) => s.name).sort();
      const from = inbox.messages.length;
      let accepted = 0;
      let refused = 0;
      /** One junk upload: timestamps now, in the past (a year back) and ahead (up to 23 h). */
      const junk = async (i: number) => {
        const now = stationNow();
        const when = [now, now - (i % 365) * DAY_MS, now + (i % 24) * HOUR_MS - 60_000][i % 3] as number;
        const done = await store(when, 100);
        if (done.initiate.status === 429) {
          refused += 1;
          assert.match(done.initiate.body.detail, /retention_max_uploads_per_hour/);
          assert.equal(done.initiate.body.code, 'rate_limited');
          assert.ok(Number(done.initiate.headers.get('retry-after')) > 0);
          return false;
        }
        assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body ?? done.initiate.body));
        accepted += 1;
        return true;
      };
      // Two hours of flood, 250 each, on the day of the last honest snapshot (noon on): the
      // first hour also counts the honest upload. One at a time until the first refusal (a new
      // upload of a job supersedes its unfinished one), then the rest of the hour ten at a time.
      for (const hour of [0, 1]) {
        if (hour === 1) move(HOUR_MS);
        let i = hour * 250;
        while (i < (hour + 1) * 250 && (await junk(i++))) {}
        for (; i < (hour + 1) * 250; i += 10) {
          const batch = Array.from({ length: Math.min(10, (hour + 1) * 250 - i) }, (_, k) => junk(i + k));
          assert.ok(
            (await Promise.all(batch)).every((stored) => !stored),
            'refused for the rest of the hour',
          );
        }
      }
      assert.equal(accepted, 11 + 12, 'the honest upload took one of the first hour’s 12');
      assert.equal(refused, 500 - 23);
      const after = (await snapshots()).map((s) => s.name);
      for (const name of before) assert.ok(after.includes(name), `${name} survived the flood`);
      // Junk cannot fill the disk either: beside the kept history, a few junk snapshots at most.
      assert.ok(after.length <= before.length + 5, `${after.length} snapshots after the flood`);
      // One notification per job and hour, and a counter of every refusal.
      const pushed = (await settle(inbox, from, 500)).filter((m) =>
        /Uploads refused/.test(String(m.headers.title)),
      );
      assert.equal(pushed.length, 2, 'one per hour of flood');
      assert.match(pushed[0]?.body ?? '', /more than 12 uploads this hour/);
      assert.equal(sampleValue(await scrape(admin), 'backupd_uploads_refused_total', labels), 500 - 23);

      // The next day, one honest backup: everything the policy keeps for honest backups stays.
      move(DAY_MS - HOUR_MS);
      const storedAt = stationNow();
      const done = await store(storedAt - HOUR_MS);
      assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body ?? done.initiate.body));
      honest.push({ name: done.finalize?.body.stored_as, storedAt, takenAt: storedAt - HOUR_MS });
      const kept = new Set((await snapshots()).map((s) => s.name));
      for (const name of expectedKept(honest))
        assert.ok(kept.has(name), `${name} kept as for honest backups`);
    });

    test('a protected snapshot survives every policy and cannot be deleted; the preview shows what would go', async () => {
      admin = await adminClient(station.url);
      const oldest = (await snapshots())[0];
      assert.ok(oldest);
      const path = `/api/snapshots/${scout}/${inst}/${job}/${oldest.name}`;
      const manage = await mintAutomationToken(admin, ['manage']);
      const protect = await fetch(`${station.url}${path}/protect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
        body: JSON.stringify({ protected: true }),
      });
      assert.equal(protect.status, 200, await protect.text());
      const refused = await admin.delete(path);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'protected');
      assert.equal((await admin.post(`${path}/protect`, { protected: 'yes' })).status, 400);

      // The preview of the harshest policy: everything but the protected one and the newest.
      const query = new URLSearchParams({
        scout_id: scout,
        scout_instance_id: inst,
        job_name: job,
        ...Object.fromEntries(Object.entries(KEEP_NEWEST_ONLY).map(([k, v]) => [k, String(v)])),
      });
      const preview = await admin.get(`/api/retention/preview?${query}`);
      assert.equal(preview.status, 200, preview.text);
      const [jobPreview] = preview.body.jobs;
      const present = await snapshots();
      assert.equal(jobPreview.deleted.length, present.length - 2);
      assert.deepEqual(jobPreview.kept.map((k: { reasons: string[] }) => k.reasons).sort(), [
        ['last'],
        ['protected'],
      ]);
      assert.equal((await snapshots()).length, present.length, 'the preview deletes nothing');
      const bad = await admin.get('/api/retention/preview?retention_keep_last=0');
      assert.equal(bad.status, 400);
      assert.match(bad.body.detail, /retention_keep_last/);

      // As the job's own policy: the next upload (tomorrow, no flush rule) prunes to two.
      const set = await admin.post(`/api/retention/jobs/${scout}/${inst}/${job}`, KEEP_NEWEST_ONLY);
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.effective.retention_keep_last, 1);
      move(DAY_MS);
      admin = await adminClient(station.url);
      const done = await store(stationNow() - HOUR_MS);
      assert.equal(done.finalize?.status, 200);
      const left = await snapshots();
      assert.deepEqual(left.map((s) => s.name).sort(), [oldest.name, done.finalize?.body.stored_as].sort());
      assert.equal(left.find((s) => s.name === oldest.name)?.protected, true);
      const metrics = await scrape(admin);
      assert.equal(sampleValue(metrics, 'backupd_snapshots_protected', labels), 1);
      assert.equal(sampleValue(metrics, 'backupd_snapshots_locked', labels), 0);

      // Unprotected, it can be deleted.
      assert.equal((await admin.post(`${path}/protect`, { protected: false })).status, 200);
      assert.equal((await admin.delete(path)).status, 200);
      assert.deepEqual(
        (await admin.post(`/api/retention/jobs/${scout}/${inst}/${job}`, {})).body.overrides,
        {},
      );
    });
  });
}
