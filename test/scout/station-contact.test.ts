// GET /api/status's `station` (configured, reachable, checked_at, code, detail) comes from the
// Scout's own last contact with its Station, recorded by the Station client on every request;
// POST /api/station/check asks now. A real Scout and a real Station: not configured, token not
// yet bound, accepted after an upload (with the snapshot's size in the job state), a per-job
// Back up now, and unreachable once the Station is gone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CHECK_EVERY_MS } from '../../src/scout/routes/status.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import {
  connectScout,
  jobState,
  type RunningScout,
  scoutStatus,
  startScout,
  startStation,
  waitIdle,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

interface StationView {
  configured: boolean;
  reachable: boolean | null;
  checked_at: string | null;
  code: string | null;
  detail: string | null;
}

describe('the Scout reports its own last contact with the Station', () => {
  let scout: RunningScout;
  let station: { server: TestServer; admin: Client };
  const view = async () => (await scoutStatus(scout.admin)) as unknown as { station: StationView };
  const check = async () => {
    const reply = await scout.admin.post<StationView>('/api/station/check');
    expectStatus(reply, 200);
    return reply.body;
  };

  before(async () => {
    [scout, station] = await Promise.all([
      startScout({
        fill: (root) =>
          buildTree(root, {
            'docs/.upload_dir': '',
            'docs/a.txt': 'alpha',
            'mail/.upload_dir': '',
            'mail/m.txt': 'm',
          }),
      }),
      startStation(),
    ]);
  });
  after(async () => {
    await scout?.server.dispose();
    await station?.server.dispose();
  });

  test('before a Station is configured: not configured, never contacted', async () => {
    const { station: s } = await view();
    assert.deepEqual(s, { configured: false, reachable: null, checked_at: null, code: null, detail: null });
    assert.deepEqual(await check(), s, 'a check without a Station asks nothing');
  });

  test('with a token not yet bound: reachable, code not_bound', async () => {
    const before = Date.now();
    await connectScout(scout.admin, station.admin, 'contact-scout');
    const s = await check();
    assert.equal(s.configured, true);
    assert.equal(s.reachable, true);
    assert.equal(s.code, 'not_bound');
    assert.ok(Date.parse(String(s.checked_at)) >= before - 1000, 'checked just now');
    assert.deepEqual((await view()).station, s, 'the status says the same');
  });

  test("one job's Back up now uploads that job only; the contact is then accepted", async () => {
    const reply = await scout.admin.post('/api/directories/run-now', { relative_path: 'docs' });
    expectStatus(reply, 200);
    assert.equal(reply.body.status, 'queued');
    await waitIdle(scout.admin);
    const docs = await jobState(scout.admin, 'docs');
    assert.equal(docs.last_status, 'uploaded', docs.last_error ?? undefined);
    assert.ok(Number((docs as { last_stored_bytes?: number }).last_stored_bytes) > 0, 'the size is kept');
    assert.equal((await jobState(scout.admin, 'mail')).last_status, 'never_run', 'the other job was not run');
    const s = (await view()).station;
    assert.equal(s.reachable, true);
    assert.equal(s.code, null);
    assert.equal(s.detail, null);
  });

  test('an unknown job is a 404 with its code', async () => {
    const reply = await scout.admin.post('/api/directories/run-now', { relative_path: 'nope' });
    expectStatus(reply, 404);
    assert.equal(reply.body.code, 'not_found');
  });

  test('once the Station is gone: not reachable, code station_unreachable', async () => {
    await station.server.stop();
    // The last check may be less than CHECK_EVERY_MS ago: move the Scout's clock past it.
    scout.server.advanceClock(CHECK_EVERY_MS);
    const s = await check();
    assert.equal(s.reachable, false);
    assert.equal(s.code, 'station_unreachable');
    assert.match(String(s.detail), /cannot reach the Station/);
  });
});
