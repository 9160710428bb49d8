// What a hostile Station-token holder (a compromised host) can do on `/backup/*` (issue #23
// item 3): drill reports for jobs or snapshots the Station does not store are refused (no
// row, no push), a job's repeated drill failures notify once, and every token has its own
// request limit (429 with Retry-After beyond it). Runs on PGlite (one Station) and on
// PostgreSQL (two Stations on one database, as behind a load balancer: requests alternate
// between them, and the limit and the de-duplication hold across both).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { HOUR_MS } from '../../../src/core/clock.ts';
import { BACKUP_REQUESTS_PER_MINUTE } from '../../../src/station/routes/station-token-auth.ts';
import { expectStatus } from '../../helpers/assertions.ts';
import { adminClient, type Client } from '../../helpers/http.ts';
import { type Receiver, settle, startReceiver } from '../../helpers/receiver.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import type { TestServer } from '../../helpers/server.ts';
import { archiveMeta, call, initiate, putChunk, upload } from '../../helpers/uploads.ts';

/** Starts the Stations of the suite: one, or several on one database. */
export type StartStations = () => Promise<TestServer[]>;

const SCOUT = 'hostA';

export function backupAbuseSuite(label: string, start: StartStations): void {
  describe(label, () => {
    let stations: TestServer[];
    let admin: Client;
    let inbox: Receiver;
    let token: string;
    let stored: string;
    const instance = randomBytes(10).toString('hex');
    let turn = 0;
    /** The next Station in turn (requests alternate between the Stations of the database). */
    const next = () => {
      turn += 1;
      return stations[turn % stations.length]?.url ?? '';
    };

    const report = (overrides: Record<string, unknown> = {}) => ({
      filename: stored,
      status: 'failed',
      files: 0,
      bytes: 0,
      error: 'cannot decrypt the snapshot',
      finished_at: new Date().toISOString(),
      ...overrides,
    });
    const drill = (job: string, body: object, credential = token) =>
      call(next(), 'POST', `/backup/drills/${SCOUT}/${instance}/${job}`, credential, body);
    const pushes = () => inbox.messages.filter((m) => /restore drill/i.test(String(m.headers.title)));

    /** The job's `last_drill` in the overview; undefined when the job is not listed. */
    async function lastDrill(job: string): Promise<{ status: string } | null | undefined> {
      const overview = await admin.get('/api/overview');
      expectStatus(overview, 200);
      for (const s of overview.body.scouts ?? [])
        for (const i of s.instances ?? [])
          if (s.scout_id === SCOUT && i.scout_instance_id === instance)
            for (const j of i.jobs ?? []) if (j.job_name === job) return j.last_drill ?? null;
      return undefined;
    }

    async function store(job: string, credential = token, inst = instance): Promise<string> {
      const data = randomBytes(2000);
      const meta = archiveMeta(data, { scout_id: SCOUT, scout_instance_id: inst, job_name: job });
      const done = await upload(stations[0]?.url ?? '', credential, data, meta);
      assert.equal(done.finalize?.status, 200, JSON.stringify(done.finalize?.body ?? done.initiate.body));
      return String(done.finalize?.body.stored_as);
    }

    before(async () => {
      inbox = await startReceiver();
      stations = await start();
      admin = await adminClient(stations[0]?.url ?? '');
      expectStatus(await admin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'station' }), 200);
      token = await mintStationToken(admin);
      stored = await store('payroll');
    });

    after(async () => {
      for (const s of stations ?? []) await s.dispose();
      await inbox?.close();
    });

    test('50 failed-drill reports for jobs that do not exist: refused, no push, no row', async () => {
      const from = inbox.messages.length;
      for (let n = 0; n < 50; n += 1) {
        const reply = await drill(`job-${n}`, report({ error: 'x'.repeat(990) }));
        assert.equal(reply.status, 404, JSON.stringify(reply.body));
        assert.equal(reply.body.code, 'not_found');
        assert.match(reply.body.detail, /no snapshot .* is stored here/);
      }
      const unknown = await drill('payroll', report({ filename: stored.replace('.tar.zst', '-9.tar.zst') }));
      assert.equal(unknown.status, 404, 'a snapshot the job does not have is refused too');
      const long = await drill('payroll', report({ error: 'x'.repeat(3900) }));
      assert.equal(long.status, 400);
      assert.match(long.body.detail, /error is at most 1000 characters/);
      assert.deepEqual(
        (await settle(inbox, from, 500)).filter((m) => /restore drill/i.test(String(m.headers.title))),
        [],
        'no push for a refused report',
      );
      // A job that appears later shows no drill: the refused reports left no row behind.
      await store('job-7');
      assert.equal(await lastDrill('job-7'), null);
      assert.equal(await lastDrill('payroll'), null);
    });

    test("a job's repeated failed drills notify once, and flapping notifies at most once an hour", async () => {
      const ok = async (body: object) => assert.equal((await drill('payroll', body)).status, 200);
      for (let n = 0; n < 5; n += 1) await ok(report());
      await settle(inbox, 0, 500);
      assert.equal(pushes().length, 1, 'the first failure is news, the same failure again is not');
      assert.match(String(pushes()[0]?.body), /could not be proven restorable/);
      assert.equal((await lastDrill('payroll'))?.status, 'failed');
      await ok(report({ status: 'ok', error: null }));
      await ok(report());
      await settle(inbox, 0, 500);
      assert.equal(pushes().length, 1, 'ok then failed again within the hour: no second push');
      for (const s of stations) s.advanceClock(HOUR_MS + 60_000);
      await ok(report({ status: 'ok', error: null }));
      await ok(report());
      await settle(inbox, 0, 500);
      assert.equal(pushes().length, 2, 'a new failure an hour later is news again');
    });

    test('a token that floods /backup gets 429 with Retry-After; other tokens and its chunks go on', async () => {
      const flooder = await mintStationToken(admin);
      const inst = randomBytes(10).toString('hex');
      const data = randomBytes(1000);
      const started = await initiate(
        next(),
        flooder,
        archiveMeta(data, { scout_id: SCOUT, scout_instance_id: inst, job_name: 'docs' }),
      );
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const listing = `/backup/recovery/${SCOUT}/${inst}/docs/snapshots`;
      let passed = 1;
      let refused: Awaited<ReturnType<typeof call>> | undefined;
      while (!refused && passed < 2 * BACKUP_REQUESTS_PER_MINUTE) {
        const replies = await Promise.all(
          Array.from({ length: 8 }, () => call(next(), 'GET', listing, flooder)),
        );
        for (const reply of replies) {
          if (reply.status === 429) refused ??= reply;
          else {
            assert.equal(reply.status, 200, JSON.stringify(reply.body));
            passed += 1;
          }
        }
      }
      assert.ok(refused, `a flood of ${passed} requests in a row was never refused`);
      assert.ok(passed >= BACKUP_REQUESTS_PER_MINUTE, `${passed} requests passed before the first 429`);
      assert.equal(refused.body.code, 'rate_limited');
      assert.match(refused.body.detail, /too many requests with this Station token/);
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
      assert.equal((await call(next(), 'GET', listing, flooder)).status, 429);
      const other = await call(
        next(),
        'GET',
        `/backup/recovery/${SCOUT}/${instance}/payroll/snapshots`,
        token,
      );
      assert.equal(other.status, 200, 'another token is not limited by this one');
      const chunk = await putChunk(stations[0]?.url ?? '', flooder, started.body.upload_id, 0, data);
      assert.equal(chunk.status, 200, `chunks are counted apart: ${JSON.stringify(chunk.body)}`);
      for (const s of stations) s.advanceClock(61_000);
      assert.equal(
        (await call(next(), 'GET', listing, flooder)).status,
        200,
        'a new window, a new allowance',
      );
    });
  });
}
