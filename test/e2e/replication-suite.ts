// Off-site copy (issue #29): a replica Station pulls every snapshot of a primary Station with an
// automation token of scope `replicate`. Real processes on real ports: a Scout backs up to the
// primary; the replica holds byte-equal copies (SHA-256 of downloads from both), never shows a
// partial copy, resumes an interrupted 64 MiB copy from what it had staged (bytes counted by the
// replica's runs), survives the primary SIGKILLed and itself SIGKILLed mid-copy, keeps what the
// primary pruned, keeps to a bandwidth limit, and serves a lost-host `backupd scout restore`.
// The replicate token is refused on every other route of the Station.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReplicationStatusView } from '../../src/shared/protocol/replication.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { startCuttingProxy } from '../helpers/cutting-proxy.ts';
import { buildTree, jobTree } from '../helpers/files.ts';
import { sha256 } from '../helpers/hashes.ts';
import { adminClient, type Client, mintAutomationToken } from '../helpers/http.ts';
import { sampleValue, scrape } from '../helpers/metrics.ts';
import { lapseUploadLeases } from '../helpers/postgres.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { backupJob, connectScout, type RunningScout, scoutStatus, startScout } from '../helpers/scout.ts';
import { runBackupd, type TestServer } from '../helpers/server.ts';
import { discoverRoutes, paramsOf } from './fuzz-kit.ts';

const MIB = 1024 * 1024;
export const READY_MS = 180_000;
const JOB = 'docs';
const BIG_JOB = 'media';
/** A job whose one snapshot's download is cut off once. */
const CUT_JOB = 'notes';
const BIG = 64 * MIB;

export interface ReplicationStations {
  primary: () => Promise<TestServer>;
  replica: () => Promise<TestServer>;
  /** A second replica Station on the replica's database (PostgreSQL only). */
  replicaTwin?: () => Promise<TestServer>;
}

interface Listed {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  filename: string;
  size_bytes: number;
  sha256: string;
}

async function replicationStatus(admin: Client): Promise<ReplicationStatusView> {
  const reply = await admin.get<ReplicationStatusView>('/api/replication');
  expectStatus(reply, 200);
  return reply.body;
}

/**
 * Waits until no run holds the lease and the run started last finished, after `since`. GET
 * /api/replication reads the saved outcome before it asks whether a run holds the lease: a run
 * that ends between the two reads shows as idle with the previous run's outcome, which
 * finished before the last start (seen once the last run took under a second).
 */
async function waitFinished(
  admin: Client,
  since: string,
  timeoutMs = 240_000,
): Promise<ReplicationStatusView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await replicationStatus(admin);
    const finished = status.last_finished_at;
    if (
      status.state !== 'running' &&
      finished &&
      finished >= since &&
      finished >= (status.last_started_at ?? '')
    )
      return status;
    if (Date.now() > deadline) throw new Error(`replication did not finish: ${JSON.stringify(status)}`);
    await sleep(100);
  }
}

/** POST /api/replication/run (queued) and wait for its end. */
async function replicate(admin: Client): Promise<ReplicationStatusView> {
  const since = new Date(Date.now() - 1000).toISOString();
  const reply = await admin.post('/api/replication/run');
  expectStatus(reply, 200);
  assert.equal(reply.body.status, 'queued');
  return waitFinished(admin, since);
}

/** Every snapshot a Station indexes (through the primary listing route, as an admin may). */
async function listing(admin: Client): Promise<Listed[]> {
  const reply = await admin.get<{ snapshots: Listed[] }>('/api/replication/source');
  expectStatus(reply, 200);
  return reply.body.snapshots.sort((a, b) => a.filename.localeCompare(b.filename));
}

/** The names the overview shows (what users see), all jobs. */
async function visible(admin: Client): Promise<string[]> {
  const reply = await admin.get('/api/overview?section=snapshots');
  expectStatus(reply, 200);
  const names: string[] = [];
  for (const s of reply.body.scouts)
    for (const i of s.instances)
      for (const j of i.jobs) names.push(...j.snapshots.map((x: { name: string }) => x.name));
  return names.sort();
}

/** SHA-256 of a snapshot downloaded from a Station by its admin. */
async function downloadedSha(admin: Client, s: Listed): Promise<string> {
  const reply = await fetch(
    `${admin.baseUrl}/api/snapshots/${s.scout_id}/${s.scout_instance_id}/${s.job_name}/${s.filename}`,
    { headers: { cookie: admin.cookieHeader() } },
  );
  assert.equal(reply.status, 200);
  return sha256(new Uint8Array(await reply.arrayBuffer()));
}

export function replicationSuite(label: string, stations: ReplicationStations): void {
  describe(label, { skip: skipUnlessPrograms(['tar']) }, () => {
    let primary: TestServer;
    let replica: TestServer;
    let primaryAdmin: Client;
    let replicaAdmin: Client;
    let scout: RunningScout;
    let token = '';
    let inbox: Receiver;
    let scoutId = '';
    let instanceId = '';
    const work = mkdtempSync(join(tmpdir(), 'backupd-replication-'));

    const configure = async (fields: Record<string, unknown>) => {
      const reply = await replicaAdmin.post('/api/settings', fields);
      expectStatus(reply, 200);
      return reply.body.settings;
    };

    before(async () => {
      inbox = await startReceiver();
      [primary, replica] = await Promise.all([stations.primary(), stations.replica()]);
      [primaryAdmin, replicaAdmin] = await Promise.all([adminClient(primary.url), adminClient(replica.url)]);
      scout = await startScout({
        prefix: 'backupd-replication-scout-',
        fill: (scan) => {
          buildTree(join(scan, JOB), {
            '.upload_dir': '',
            'a.txt': 'first version',
            'sub/b.bin': randomBytes(200_000),
            'sub/empty/': null,
          });
        },
      });
      await connectScout(scout.admin, primaryAdmin, 'laptop');
      const status = await scoutStatus(scout.admin);
      scoutId = status.scout_id;
      instanceId = status.scout_instance_id;
      await backupJob(scout.admin, JOB);
      writeFileSync(join(scout.scanRoot, JOB, 'a.txt'), 'second version, longer');
      await backupJob(scout.admin, JOB);
      token = await mintAutomationToken(primaryAdmin, ['replicate']);
    });

    after(async () => {
      await scout?.server.dispose();
      await primary?.dispose();
      await replica?.dispose();
      await inbox?.close();
      rmSync(work, { recursive: true, force: true });
    });

    test('the replicate token lists and downloads snapshots and is refused (403) on every other route', async () => {
      const bearer = { authorization: `Bearer ${token}` };
      const listed = await fetch(`${primary.url}/api/replication/source`, { headers: bearer });
      assert.equal(listed.status, 200);
      const body = (await listed.json()) as { snapshots: Listed[] };
      assert.equal(body.snapshots.length, 2);
      const first = body.snapshots[0] as Listed;
      const ranged = await fetch(
        `${primary.url}/api/replication/source/snapshots/${first.scout_id}/${first.scout_instance_id}/${first.job_name}/${first.filename}`,
        { headers: { ...bearer, range: 'bytes=10-' } },
      );
      assert.equal(ranged.status, 206);
      assert.equal((await ranged.arrayBuffer()).byteLength, first.size_bytes - 10);

      const values: Record<string, string> = {
        scoutId: first.scout_id,
        instanceId: first.scout_instance_id,
        jobName: first.job_name,
        filename: first.filename,
      };
      const allowed = new Set([
        'GET /api/replication/source',
        'GET /api/replication/source/snapshots/:scoutId/:instanceId/:jobName/:filename',
      ]);
      const routes = discoverRoutes('station').filter(
        (r) => r.path.startsWith('/api/') || r.path === '/metrics',
      );
      assert.ok(routes.length >= 40, `found ${routes.length} /api routes`);
      const wrong: string[] = [];
      for (const route of routes) {
        if (allowed.has(`${route.method} ${route.path}`)) continue;
        const path = route.path.replace(/:(\w+)/g, (_, name: string) => values[name] ?? 'x');
        assert.deepEqual(paramsOf(path), []);
        const reply = await fetch(`${primary.url}${path}`, {
          method: route.method,
          headers: { ...bearer, 'content-type': 'application/json', origin: primary.url },
          ...(route.method === 'GET' ? {} : { body: '{}' }),
        });
        if (reply.status !== 403) wrong.push(`${route.method} ${route.path}: ${reply.status}`);
      }
      assert.deepEqual(wrong, [], 'every other route answers 403 to the replicate token');
      // Nothing was deleted or changed by the walk.
      assert.equal((await listing(primaryAdmin)).length, 2);
    });

    test('the replica holds byte-equal copies of every snapshot, and both sides show it', async () => {
      const saved = await configure({
        replication_source_url: primary.url,
        replication_token: token,
        replication_schedule: '',
      });
      assert.equal(saved.replication_token_set, true);
      expectStatus(await replicaAdmin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'replica' }), 200);
      assert.equal(saved.replication_token, undefined, 'the token is never answered');
      const overview = await replicaAdmin.get('/api/overview?section=settings');
      assert.ok(!JSON.stringify(overview.body).includes(token), 'the token is not in the overview');

      const status = await replicate(replicaAdmin);
      assert.equal(status.last_error, null);
      const onPrimary = await listing(primaryAdmin);
      const onReplica = await listing(replicaAdmin);
      assert.deepEqual(
        onReplica.map((s) => [s.filename, s.size_bytes, s.sha256]),
        onPrimary.map((s) => [s.filename, s.size_bytes, s.sha256]),
      );
      for (const s of onPrimary) {
        const [a, b] = await Promise.all([downloadedSha(primaryAdmin, s), downloadedSha(replicaAdmin, s)]);
        assert.equal(a, s.sha256);
        assert.equal(b, s.sha256, `${s.filename} on the replica is byte-equal`);
      }
      assert.deepEqual(await visible(replicaAdmin), onPrimary.map((s) => s.filename).sort());
      const job = status.jobs.find((j) => j.job_name === JOB);
      assert.equal(job?.lag_seconds, 0);
      assert.equal(job?.replica_newest, job?.source_newest);

      const pulls = await primaryAdmin.get('/api/replication/pulls');
      expectStatus(pulls, 200);
      const replicaRow = pulls.body.replicas.find((r: { name: string }) => r.name === 'test replicate');
      assert.ok(replicaRow?.last_download_at, 'the primary shows when the replica pulled');
      assert.ok(replicaRow.bytes_served >= onPrimary.reduce((n, s) => n + s.size_bytes, 0));

      const replicaMetrics = await scrape(replicaAdmin);
      assert.equal(
        sampleValue(replicaMetrics, 'backupd_replication_lag_seconds', {
          scout_id: scoutId,
          scout_instance_id: instanceId,
          job_name: JOB,
        }),
        0,
      );
      assert.ok((sampleValue(replicaMetrics, 'backupd_replication_copied_bytes_total') ?? 0) > 0);
      const primaryMetrics = await scrape(primaryAdmin);
      assert.ok(
        (sampleValue(primaryMetrics, 'backupd_replication_pull_timestamp_seconds', {
          replica: 'test replicate',
        }) ?? 0) > 0,
      );

      // A second run copies nothing.
      const again = await replicate(replicaAdmin);
      assert.equal(again.bytes_copied, 0);
      assert.equal(again.last_error, null);
    });

    test('snapshots the primary pruned stay on the replica; new ones are copied', async () => {
      const [oldest] = await listing(primaryAdmin);
      assert.ok(oldest);
      const removed = await primaryAdmin.delete(
        `/api/snapshots/${oldest.scout_id}/${oldest.scout_instance_id}/${oldest.job_name}/${oldest.filename}`,
      );
      expectStatus(removed, 200);
      writeFileSync(join(scout.scanRoot, JOB, 'c.txt'), 'a third snapshot');
      const third = await backupJob(scout.admin, JOB);
      const status = await replicate(replicaAdmin);
      assert.equal(status.last_error, null);
      const names = (await listing(replicaAdmin)).map((s) => s.filename);
      assert.ok(names.includes(oldest.filename), 'the pruned snapshot is still on the replica');
      assert.ok(names.includes(third), 'the new snapshot was copied');
      assert.equal(names.length, 3);
    });

    test('a download cut off mid-answer is asked again from where the store stopped, in the same run', async () => {
      buildTree(join(scout.scanRoot, CUT_JOB), { '.upload_dir': '', 'n.bin': randomBytes(2 * MIB) });
      const snapshot = await backupJob(scout.admin, CUT_JOB);
      const source = (await listing(primaryAdmin)).find((s) => s.filename === snapshot);
      assert.ok(source);
      const proxy = await startCuttingProxy(primary.url);
      try {
        await configure({ replication_source_url: proxy.url });
        proxy.cutNext(snapshot, MIB);
        const status = await replicate(replicaAdmin);
        assert.equal(status.last_error, null, 'one run copies it, without an error');
        assert.equal(proxy.ranges.length, 2, `asked twice: ${proxy.ranges.join(', ')}`);
        assert.match(proxy.ranges[0] ?? '', /^bytes=0-/);
        const copy = (await listing(replicaAdmin)).find((s) => s.filename === snapshot);
        assert.equal(copy?.sha256, source.sha256);
        assert.equal(await downloadedSha(replicaAdmin, source), source.sha256);
      } finally {
        await configure({ replication_source_url: primary.url });
        await proxy.close();
      }
    });

    // Only where the replica's database can be shared (PostgreSQL; PGlite is one process's).
    const twinOf = stations.replicaTwin;
    if (twinOf)
      test('two replica Stations on one database: one copies, the other answers already_running', async () => {
        const twin = await twinOf();
        try {
          const twinAdmin = await adminClient(twin.url);
          writeFileSync(join(scout.scanRoot, JOB, 'd.bin'), randomBytes(300_000));
          await backupJob(scout.admin, JOB);
          await configure({ replication_bytes_per_second: 64 * 1024 });
          const since = new Date(Date.now() - 1000).toISOString();
          const first = await replicaAdmin.post('/api/replication/run');
          assert.equal(first.body.status, 'queued');
          const other = await twinAdmin.post('/api/replication/run');
          expectStatus(other, 200);
          assert.equal(other.body.status, 'already_running');
          assert.equal((await replicationStatus(twinAdmin)).state, 'running');
          const done = await waitFinished(replicaAdmin, since);
          assert.equal(done.last_error, null);
        } finally {
          await configure({ replication_bytes_per_second: 0 });
          await twin.dispose();
        }
      });

    test('a 64 MiB copy interrupted by the primary SIGKILLed and the replica SIGKILLed resumes, never visible half-done, within the bandwidth limit', async (t) => {
      buildTree(join(scout.scanRoot, BIG_JOB), { '.upload_dir': '', 'video.bin': randomBytes(BIG) });
      const big = await backupJob(scout.admin, BIG_JOB, { timeoutMs: 180_000 });
      const source = (await listing(primaryAdmin)).find((s) => s.filename === big);
      assert.ok(source && source.size_bytes > BIG);
      const size = source.size_bytes;

      const rate = 8 * MIB;
      // The replica's clock runs 2 hours ahead: the job it has no copy of yet is 2 hours behind.
      replica.advanceClock(2 * 3600_000);
      await configure({ replication_bytes_per_second: rate, replication_max_lag_hours: 1 });
      const started = Date.now();
      const since = new Date(started - 1000).toISOString();
      expectStatus(await replicaAdmin.post('/api/replication/run'), 200);
      // Wait for some of it to arrive, then check nothing half-copied is visible.
      let status = await replicationStatus(replicaAdmin);
      while (status.bytes_copied < 20 * MIB) {
        await sleep(100);
        status = await replicationStatus(replicaAdmin);
      }
      const elapsed = (Date.now() - started) / 1000;
      assert.ok(
        elapsed >= (status.bytes_copied / rate) * 0.9 - 1,
        `the copy keeps to ${rate} bytes/s: ${status.bytes_copied} bytes in ${elapsed} s`,
      );
      assert.ok(!(await visible(replicaAdmin)).includes(big), 'a partial copy is never visible');
      assert.ok(!(await listing(replicaAdmin)).some((s) => s.filename === big));

      // The primary dies mid-copy.
      await primary.kill();
      const broken = await waitFinished(replicaAdmin, since);
      assert.match(broken.last_error ?? '', /not copied|cannot be reached/);
      const firstPart = broken.bytes_copied;
      // Notified (ntfy): the failure, and the job whose lag passed replication_max_lag_hours.
      const titles = async () => {
        for (let i = 0; i < 100; i++) {
          const all = inbox.messages.map((m) => String(m.headers.title ?? ''));
          if (all.some((t) => /failed/.test(t)) && all.some((t) => /behind/.test(t))) return all;
          await sleep(100);
        }
        return inbox.messages.map((m) => String(m.headers.title ?? ''));
      };
      const notified = await titles();
      assert.ok(notified.includes('Replication from the primary failed'), notified.join(' | '));
      assert.ok(notified.includes(`Replica behind for ${BIG_JOB} on ${scoutId}`), notified.join(' | '));
      assert.ok(firstPart > 0 && firstPart < size, `first run kept ${firstPart} of ${size}`);
      assert.ok(!(await visible(replicaAdmin)).includes(big));
      primary = await primary.restart();

      // The replica goes on, slower (2 MiB/s: at least 16 MiB are left), and is SIGKILLed
      // mid-copy itself.
      await configure({ replication_bytes_per_second: 2 * MIB });
      const second = await replicaAdmin.post('/api/replication/run');
      expectStatus(second, 200);
      assert.equal(second.body.status, 'queued');
      await sleep(1500);
      status = await replicationStatus(replicaAdmin);
      assert.equal(status.state, 'running', 'the replica is killed while it copies');
      const secondPart = status.bytes_copied;
      await replica.kill();
      replica = await replica.restart();
      // On PostgreSQL the killed replica held its copy's upload lease, which lapses a minute
      // later on the database's clock: end it there instead of waiting.
      await lapseUploadLeases(replica);
      replicaAdmin = await adminClient(replica.url);
      assert.ok(!(await visible(replicaAdmin)).includes(big), 'no partial copy after the restart');

      // The last run, unlimited, finishes it.
      await configure({ replication_bytes_per_second: 0 });
      const last = await replicate(replicaAdmin);
      // On a failure, what each side logged about the download says which one broke it.
      const about = (server: TestServer) =>
        server
          .output()
          .split('\n')
          .filter((line) => /download|copying/.test(line))
          .slice(-5)
          .join('\n');
      assert.equal(last.last_error, null, `primary:\n${about(primary)}\nreplica:\n${about(replica)}`);
      const sent = firstPart + secondPart + last.bytes_copied;
      t.diagnostic(
        `snapshot ${size} bytes; runs received ${firstPart} (primary killed), ${secondPart} (replica killed), ${last.bytes_copied}: ${sent - size} bytes sent twice`,
      );
      // At most what was in flight when the replica was killed is sent again (one 16 MiB piece).
      // Bytes the replica kept when it was killed are not counted, and are not sent again either.
      assert.ok(sent <= size + 16 * MIB, `bytes received over three runs: ${sent} for ${size}`);
      assert.ok(
        last.bytes_copied <= size - firstPart - secondPart + 16 * MIB,
        `the last run resumed: ${last.bytes_copied} of ${size}`,
      );
      const copy = (await listing(replicaAdmin)).find((s) => s.filename === big);
      assert.equal(copy?.sha256, source.sha256);
      assert.equal(await downloadedSha(replicaAdmin, source), source.sha256);
    });

    test('a lost host restores from the replica with a recovery token minted there', async () => {
      const mint = await replicaAdmin.post('/api/credentials/mint', {
        scout_id: scoutId,
        scout_instance_id: instanceId,
      });
      expectStatus(mint, 201);
      const key = await scout.admin.get('/api/encryption-key');
      expectStatus(key, 200);
      const dest = join(work, 'restored');
      const result = await runBackupd([
        'scout',
        'restore',
        '--job',
        JOB,
        '--dest',
        dest,
        '--station-url',
        replica.url,
        '--token',
        mint.body.credential,
        '--scout-id',
        scoutId,
        '--instance-id',
        instanceId,
        '--key',
        key.body.key_base64,
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(jobTree(dest), jobTree(join(scout.scanRoot, JOB)));
    });
  });
}
