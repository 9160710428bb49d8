// GET /metrics on the Scout (docs/extensions.md, Both roles; README, Metrics): who may read it, and
// the job gauges and operation bytes after a real backup to a real Station and after a backup
// the Station refused (its uploads paused). The drill gauge exists without samples until
// restore drills land.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openScoutStorage } from '../../src/scout/db/open.ts';
import { createRunner } from '../../src/scout/schedule/runner.ts';
import { addedBytes, createScoutMetrics } from '../../src/scout/services/scout-metrics.ts';
import { createJobStates } from '../../src/scout/state/job-states.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import { Client, mintAutomationToken } from '../helpers/http.ts';
import { assertMetricsRefused, parseMetrics, sampleValue, scrape } from '../helpers/metrics.ts';
import { connectScout, jobState, runNow, startScout, startStation } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

let station: TestServer;
let stationAdmin: Client;
let scout: TestServer;
let admin: Client;
let scanRoot: string;
let readToken: string;

const read = () => scrape({ url: scout.url, token: readToken });
const DOCS_BYTES = 5 + 120_000;

/** What the Station holds of `job`: the sizes of its snapshots. */
async function storedSizes(job: string): Promise<number[]> {
  const overview = await stationAdmin.get('/api/overview?section=snapshots');
  expectStatus(overview, 200);
  const sizes: number[] = [];
  for (const s of overview.body.scouts)
    for (const i of s.instances)
      for (const j of i.jobs)
        if (j.job_name === job) sizes.push(...j.snapshots.map((x: { size_bytes: number }) => x.size_bytes));
  return sizes;
}

describe('Scout metrics', () => {
  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    ({
      server: scout,
      admin,
      scanRoot,
    } = await startScout({
      fill: (scan) =>
        buildTree(scan, {
          'docs/.upload_dir': '',
          'docs/a.txt': 'alpha',
          'docs/b.bin': Buffer.alloc(120_000, 7),
          'photos/.upload_dir': 'job_name: pictures\n',
          'photos/p.jpg': Buffer.alloc(30_000, 1),
        }),
    }));
    await connectScout(admin, stationAdmin, 'metrics-scout');
    readToken = await mintAutomationToken(admin, ['read']);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
  });

  test('only a read-scope automation token or an admin session reads /metrics', async () => {
    const outsider = new Client(scout.url);
    assert.equal((await outsider.get('/metrics')).status, 401);
    await assertMetricsRefused(outsider, admin);
    await scrape(admin);
  });

  test('before any backup: the families, without job samples', async () => {
    const metrics = await read();
    const families: Record<string, string> = {
      backupd_job_last_success_timestamp_seconds: 'gauge',
      backupd_job_last_drill_success_timestamp_seconds: 'gauge',
      backupd_job_failed: 'gauge',
      backupd_operation_bytes_total: 'counter',
      process_resident_memory_bytes: 'gauge',
    };
    for (const [name, type] of Object.entries(families)) {
      assert.equal(metrics.get(name)?.type, type, `${name} is a ${type}`);
    }
    assert.deepEqual(metrics.get('backupd_job_last_success_timestamp_seconds')?.samples, []);
    assert.deepEqual(metrics.get('backupd_operation_bytes_total')?.samples, []);
  });

  test('after a backup: last success per job, no failure, bytes read and sent', async () => {
    await runNow(admin);
    const docs = await jobState(admin, 'docs');
    assert.equal(docs.last_status, 'uploaded', docs.last_error ?? undefined);
    const metrics = await read();
    const success = (job_name: string) =>
      sampleValue(metrics, 'backupd_job_last_success_timestamp_seconds', { job_name });
    assert.equal(success('docs'), Date.parse(String(docs.last_success_at)) / 1000);
    assert.ok(success('pictures'));
    assert.equal(sampleValue(metrics, 'backupd_job_failed', { job_name: 'docs' }), 0);
    assert.equal(sampleValue(metrics, 'backupd_job_failed', { job_name: 'pictures' }), 0);
    const bytes = (phase: string) =>
      sampleValue(metrics, 'backupd_operation_bytes_total', { kind: 'cycle', phase });
    assert.equal(bytes('archiving'), DOCS_BYTES + 30_000, 'every source byte read once');
    const sent = [...(await storedSizes('docs')), ...(await storedSizes('pictures'))];
    assert.equal(sent.length, 2);
    const total = sent.reduce((sum, n) => sum + n, 0);
    assert.equal(bytes('uploading'), total, 'every archive byte sent once');
    assert.deepEqual(metrics.get('backupd_job_last_drill_success_timestamp_seconds')?.samples, []);
  });

  test('a backup the Station refuses: the job reads as failed, its last success stays', async () => {
    const before = await read();
    expectStatus(await stationAdmin.post('/api/admin/uploads/pause'), 200);
    writeFileSync(join(scanRoot, 'docs', 'a.txt'), 'alpha, now longer');
    scout.advanceClock(60_000);
    await runNow(admin);
    const docs = await jobState(admin, 'docs');
    assert.equal(docs.last_status, 'failed');
    const metrics = await read();
    assert.equal(sampleValue(metrics, 'backupd_job_failed', { job_name: 'docs' }), 1);
    assert.equal(sampleValue(metrics, 'backupd_job_failed', { job_name: 'pictures' }), 0);
    const success = (m: typeof metrics, job_name: string) =>
      sampleValue(m, 'backupd_job_last_success_timestamp_seconds', { job_name });
    assert.equal(success(metrics, 'docs'), success(before, 'docs'), 'a failure is not a success');
    assert.ok((success(metrics, 'pictures') ?? 0) > (success(before, 'pictures') ?? 0), 'unchanged counts');
    const archived = (m: typeof metrics) =>
      sampleValue(m, 'backupd_operation_bytes_total', { kind: 'cycle', phase: 'archiving' }) ?? 0;
    assert.equal(archived(metrics) - archived(before), DOCS_BYTES + 12, 'the changed job was read again');
  });
});

describe('Scout metrics from job state (the Scout database in a temp dir)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backupd-scout-metrics-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('the drill gauge follows the last drill: a success shows its time, a failure none', async () => {
    const storage = await openScoutStorage(dataDir);
    try {
      const states = createJobStates(storage.scoutDb);
      const metrics = createScoutMetrics({ states, runner: createRunner() });
      const drill = (status: string, finished_at: string) =>
        JSON.stringify({ filename: 'x.tar.zst', status, files: 1, bytes: 1, error: null, finished_at });
      await states.update('docs', 'docs', { lastDrill: drill('ok', '2026-05-01T10:00:00.000Z') });
      await states.update('mail', 'mail', { lastDrill: drill('failed', '2026-05-02T10:00:00.000Z') });
      await states.update('pics', 'pics', { lastDrill: null });
      await metrics.refresh();
      const parsed = parseMetrics(await metrics.registry.metrics());
      const name = 'backupd_job_last_drill_success_timestamp_seconds';
      assert.equal(
        sampleValue(parsed, name, { job_name: 'docs' }),
        Date.parse('2026-05-01T10:00:00Z') / 1000,
      );
      assert.equal(parsed.get(name)?.samples.length, 1, 'no sample after a failed drill or none');
      assert.equal(sampleValue(parsed, 'backupd_job_failed', { job_name: 'mail' }), 0);
    } finally {
      await storage.close();
    }
  });

  test('operation bytes: a phase counts up from 0 per job; another phase or job starts again', () => {
    const op = {
      kind: 'cycle' as const,
      job_name: 'docs',
      phase: 'archiving',
      bytes_done: 500,
      bytes_total: 1000,
      problems: 0,
      started_at: '',
    };
    assert.equal(addedBytes(op, { bytes_done: 800 }), 300);
    assert.equal(addedBytes(op, { bytes_done: 200 }), 200, 'a lower value is a new count');
    assert.equal(addedBytes(op, { phase: 'uploading', bytes_done: 0 }), 0);
    assert.equal(addedBytes(op, { job_name: 'mail', phase: 'archiving', bytes_done: 40 }), 40);
    assert.equal(addedBytes(op, { phase: 'restoring' }), 0);
  });
});
