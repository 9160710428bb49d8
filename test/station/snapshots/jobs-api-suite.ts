// `GET /api/jobs` (issue #28 items 6 and 12): one row per job with its health decided on the
// Station, filters, failing first, cursor paging; a job's snapshots on demand; the restore
// targets. Runs on PGlite and on PostgreSQL (see the two runner files). One Station shared by
// the tests, which run in order; the clock only moves forward, in the last tests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../../src/core/clock.ts';
import { stationPaths } from '../../../src/shared/protocol/api-paths.ts';
import type { JobSummary } from '../../../src/shared/protocol/jobs.ts';
import { expectStatus } from '../../helpers/assertions.ts';
import { adminClient, type Client } from '../../helpers/http.ts';
import type { TestServer } from '../../helpers/server.ts';
import { archiveMeta, call, upload } from '../../helpers/uploads.ts';

export type StartStation = () => Promise<TestServer>;

const INSTANCE = 'inst0000000000000001';
/** Three hosts: host-1 with jobs a, b, c; host-2 with jobs a, b; host-3 with job a. */
const JOBS: [string, string][] = [
  ['host-1', 'a'],
  ['host-1', 'b'],
  ['host-1', 'c'],
  ['host-2', 'a'],
  ['host-2', 'b'],
  ['host-3', 'a'],
];

const key = (j: Pick<JobSummary, 'scout_id' | 'job_name'>) => `${j.scout_id}/${j.job_name}`;

export function jobsApiSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    let token: string;
    /** Stored names per job, oldest first. */
    const stored = new Map<string, string[]>();

    const jobs = async (query = '') => {
      const reply = await admin.get(stationPaths.jobs(Object.fromEntries(new URLSearchParams(query))));
      expectStatus(reply, 200);
      return reply.body as {
        jobs: JobSummary[];
        next_cursor: string | null;
        total: number;
        counts: Record<string, number>;
      };
    };
    const one = async (scout: string, job: string) => {
      const page = await jobs(`?scout_id=${scout}&job_name=${job}`);
      assert.equal(page.jobs.length, 1, JSON.stringify(page));
      return page.jobs[0] as JobSummary;
    };
    const drill = async (scout: string, job: string, status: 'ok' | 'failed', finishedAt: number) => {
      const reply = await call(station.url, 'POST', `/backup/drills/${scout}/${INSTANCE}/${job}`, token, {
        filename: stored.get(`${scout}/${job}`)?.at(-1),
        status,
        files: 1,
        bytes: 10,
        error: status === 'failed' ? 'cannot decrypt the snapshot' : null,
        finished_at: new Date(finishedAt).toISOString(),
      });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
    };

    before(async () => {
      station = await start();
      admin = await adminClient(station.url);
      const minted = await admin.post('/api/credentials/mint', { shared: true, max_registrations: 5 });
      expectStatus(minted, 201);
      token = minted.body.credential;
      for (const [scout, job] of JOBS) {
        const names: string[] = [];
        for (const size of job === 'a' ? [1000, 1100, 1200] : [700]) {
          const data = randomBytes(size);
          const meta = archiveMeta(data, { scout_id: scout, scout_instance_id: INSTANCE, job_name: job });
          const result = await upload(station.url, token, data, meta);
          assert.equal(result.finalize?.status, 200, JSON.stringify(result.initiate.body));
          names.push(result.finalize?.body.stored_as);
        }
        stored.set(`${scout}/${job}`, names);
      }
    });
    after(async () => {
      await station?.dispose();
    });

    test('one row per job: ids, count, bytes, newest, recent sizes, instance; all ok', async () => {
      const page = await jobs();
      assert.equal(page.total, JOBS.length);
      assert.equal(page.next_cursor, null);
      assert.deepEqual(
        page.jobs.map(key),
        JOBS.map(([s, j]) => `${s}/${j}`),
        'by host, then job',
      );
      const a = page.jobs[0] as JobSummary;
      assert.equal(a.scout_instance_id, INSTANCE);
      assert.equal(a.health, 'ok');
      assert.deepEqual(a.problems, []);
      assert.equal(a.snapshot_count, 3);
      assert.equal(a.total_bytes, 3300);
      assert.equal(a.newest?.name, stored.get('host-1/a')?.at(-1));
      assert.equal(a.newest?.size_bytes, 1200);
      assert.deepEqual(a.recent_sizes, [1000, 1100, 1200], 'oldest first');
      assert.equal(a.last_drill, null);
      assert.ok(a.instance.last_seen_at, 'the instance was seen');
      assert.deepEqual(page.counts, { failing: 0, stale: 0, not_proven: 0, ok: JOBS.length });
    });

    test('cursor paging walks every job once, in the same order', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await jobs(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        assert.ok(page.jobs.length <= 4);
        assert.equal(page.total, JOBS.length);
        seen.push(...page.jobs.map(key));
        cursor = page.next_cursor;
        pages += 1;
      } while (cursor);
      assert.equal(pages, 2);
      assert.deepEqual(
        seen,
        JOBS.map(([s, j]) => `${s}/${j}`),
      );
    });

    test('filters: host, job, text in any of the three, combined', async () => {
      assert.deepEqual((await jobs('?scout_id=host-2')).jobs.map(key), ['host-2/a', 'host-2/b']);
      assert.deepEqual((await jobs('?job_name=b')).jobs.map(key), ['host-1/b', 'host-2/b']);
      assert.deepEqual((await jobs('?q=HOST-3')).jobs.map(key), ['host-3/a'], 'case-insensitive');
      assert.equal((await jobs('?q=inst0000')).total, JOBS.length, 'the instance ID matches too');
      assert.deepEqual((await jobs('?scout_id=host-1&job_name=c')).jobs.map(key), ['host-1/c']);
      const none = await jobs('?q=nothing-like-this');
      assert.deepEqual([none.jobs.length, none.total, none.next_cursor], [0, 0, null]);
    });

    test("a job's snapshots on demand, newest first; the restore targets", async () => {
      const reply = await admin.get(
        stationPaths.jobSnapshots({ scoutId: 'host-1', instanceId: INSTANCE, jobName: 'a' }),
      );
      expectStatus(reply, 200);
      assert.deepEqual(
        reply.body.snapshots.map((s: { name: string }) => s.name),
        [...(stored.get('host-1/a') ?? [])].reverse(),
      );
      assert.equal(reply.body.snapshots[0].size_bytes, 1200);
      const unknown = await admin.get(
        stationPaths.jobSnapshots({ scoutId: 'host-9', instanceId: INSTANCE, jobName: 'a' }),
      );
      expectStatus(unknown, 200);
      assert.deepEqual(unknown.body.snapshots, []);
      const targets = await admin.get(stationPaths.instances);
      expectStatus(targets, 200);
      assert.deepEqual(
        targets.body.instances.map((i: { scout_id: string }) => i.scout_id),
        ['host-1', 'host-2', 'host-3'],
      );
    });

    test('bad input is a 400 naming the problem; no session is a 401', async () => {
      expectStatus(await admin.get(`${stationPaths.jobs()}?limit=0`), 400, /limit/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?limit=501`), 400, /limit/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?limit=ten`), 400, /limit/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?health=bad`), 400, /health/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?cursor=bm90LWEtY3Vyc29y`), 400, /cursor/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?cursor=${'x'.repeat(300)}`), 400, /cursor/);
      expectStatus(await admin.get(`${stationPaths.jobs()}?limit=1&limit=2`), 400, /limit/);
      expectStatus(
        await admin.get(
          stationPaths.jobSnapshots({ scoutId: 'host-1', instanceId: INSTANCE, jobName: 'a b' }),
        ),
        400,
        /job_name/,
      );
      expectStatus(await new (admin.constructor as typeof Client)(station.url).get(stationPaths.jobs()), 401);
    });

    test('a failed drill makes a job failing, and its host comes first with that job first', async () => {
      await drill('host-2', 'b', 'failed', Date.now());
      const page = await jobs();
      assert.deepEqual(page.jobs.map(key), [
        'host-2/b',
        'host-2/a',
        'host-1/a',
        'host-1/b',
        'host-1/c',
        'host-3/a',
      ]);
      const failing = page.jobs[0] as JobSummary;
      assert.equal(failing.health, 'failing');
      assert.deepEqual(failing.problems, ['drill_failed']);
      assert.equal(failing.last_drill?.status, 'failed');
      assert.equal(page.counts.failing, 1);
      const only = await jobs('?health=failing');
      assert.deepEqual([only.jobs.map(key), only.total], [['host-2/b'], 1]);
      assert.equal((await jobs('?health=ok')).total, JOBS.length - 1);
      // Paging across the reordered list still walks every job once.
      const first = await jobs('?limit=1');
      const rest = await jobs(`?limit=10&cursor=${first.next_cursor}`);
      assert.deepEqual([...first.jobs, ...rest.jobs].map(key), page.jobs.map(key));
    });

    test('three days on: stale; a passed drill keeps a job proven; fifteen days on: not proven', async () => {
      await drill('host-3', 'a', 'ok', Date.now());
      station.advanceClock(3 * DAY_MS);
      const stale = await one('host-1', 'a');
      assert.equal(stale.health, 'stale');
      assert.deepEqual(stale.problems, ['stale']);
      assert.equal((await jobs('?health=stale')).total, JOBS.length - 1, 'every job but the failing one');

      // A fresh snapshot of host-1/a: no longer stale, and never drilled but too young to judge.
      const data = randomBytes(1300);
      const meta = archiveMeta(data, { scout_id: 'host-1', scout_instance_id: INSTANCE, job_name: 'a' });
      assert.equal((await upload(station.url, token, data, meta)).finalize?.status, 200);
      assert.equal((await one('host-1', 'a')).health, 'ok');

      station.advanceClock(12 * DAY_MS);
      admin = await adminClient(station.url); // the session of day 0 expired on day 7
      const never = await one('host-1', 'b');
      assert.equal(never.health, 'stale');
      assert.deepEqual(never.problems, ['stale', 'not_proven'], 'never drilled, older than 14 days');
      const drilled = await one('host-3', 'a');
      assert.deepEqual(drilled.problems, ['stale', 'not_proven'], 'the last passed drill is 15 days old');
    });

    test('the summaries follow every change: protect, delete, a file gone at a restart', async () => {
      const newest = stored.get('host-1/a')?.at(-1) ?? '';
      const protect = await admin.post(`/api/snapshots/host-1/${INSTANCE}/a/${newest}/protect`, {
        protected: true,
      });
      expectStatus(protect, 200);
      assert.equal((await one('host-1', 'a')).protected_count, 1);

      const only = stored.get('host-1/c')?.[0] ?? '';
      expectStatus(await admin.delete(`/api/snapshots/host-1/${INSTANCE}/c/${only}`), 200);
      const left = await jobs();
      assert.equal(left.total, JOBS.length - 1, 'a job without snapshots is no row');
      assert.ok(!left.jobs.some((j) => key(j) === 'host-1/c'));
      const storage = await admin.get('/api/overview?section=storage');
      assert.equal(
        storage.body.storage.snapshot_count,
        left.jobs.reduce((sum, j) => sum + j.snapshot_count, 0),
        "the storage card's count is the jobs' sum",
      );

      const gone = stored.get('host-2/a')?.[0] ?? '';
      rmSync(join(station.dataDir, 'snapshots', 'host-2', INSTANCE, 'a', gone));
      station = await station.restart();
      admin = await adminClient(station.url);
      const failing = await one('host-2', 'a');
      assert.equal(failing.health, 'failing');
      assert.ok(failing.problems.includes('files_missing'), failing.problems.join());
      assert.deepEqual([failing.snapshot_count, failing.missing_count], [2, 1]);
    });
  });
}
