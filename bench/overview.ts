/**
 * The dashboard at a thousand hosts (issue #28, "Done when"): a Station's database filled with
 * BENCH_HOSTS (1,000) hosts × 10 jobs × 30 snapshots, inserted through the Station's own
 * database layer (src/station/db/open.ts) with an empty file per snapshot on the disk store so
 * the start-up reconcile finds them present. Then the built Station starts on it and a real
 * Chromium (playwright-core and Debian's chromium, as the UI tests) opens the dashboard:
 * - the first page of jobs shown, from navigation start (target < 1 s);
 * - the Station's peak RSS from its start through the page (target < 300 MiB);
 * with GET /api/jobs's own time and size for the first page beside them.
 * The database is the embedded default (PGlite, inside the Station's process, so its memory
 * counts in the Station's RSS) and then a PostgreSQL server (DATABASE_URL, as the README advises
 * for a larger installation), each filled the same way. BENCH_DATABASES=pglite or =postgres
 * runs one of them.
 * Run with `npm run bench` (it builds dist/ first), or alone: `node bench/overview.ts`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DAY_MS } from '../src/core/clock.ts';
import { stationPaths } from '../src/shared/protocol/api-paths.ts';
import { utcSecond } from '../src/shared/protocol/fields.ts';
import { JOBS_PAGE_DEFAULT } from '../src/shared/protocol/jobs.ts';
import { openStationDatabase } from '../src/station/db/open.ts';
import { drills, instances, snapshots } from '../src/station/db/station-tables.ts';
import { firstSignIn, launchBrowser, newPage } from '../test/helpers/browser.ts';
import { adminClient } from '../test/helpers/http.ts';
import { seedPgliteCluster } from '../test/helpers/pglite-template.ts';
import { createDatabase, type PostgresServer, startPostgres } from '../test/helpers/postgres.ts';
import { ROOT, startServer } from '../test/helpers/server.ts';
import { cpuSeconds, peakRssMib, sampleRss } from './proc-stats.ts';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 1000);
const JOBS = 10;
const SNAPSHOTS = 30;
const FIRST_PAGE_TARGET_MS = 1000;
const RSS_TARGET_MIB = 300;
const HOSTS_PER_COMMIT = 100;

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const stamp = (ms: number) => utcSecond(ms).replaceAll(':', '-');

type SnapshotInsert = typeof snapshots.$inferInsert;

/** Fills the database and the disk store: one row and one empty file per snapshot. */
async function seed(
  dataDir: string,
  databaseUrl: string | undefined,
): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  if (databaseUrl === undefined) seedPgliteCluster(ROOT, dataDir);
  else mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const database = await openStationDatabase({ dataDir, databaseUrl });
  const now = Date.now();
  let batch: SnapshotInsert[] = [];
  let rows = 0;
  try {
    // A transaction per HOSTS_PER_COMMIT hosts: few commits (a commit per batch made seeding
    // I/O-bound: 6.5 min), and few enough jobs per transaction for PostgreSQL's lock table (the
    // job_summaries trigger takes one advisory lock per job; 10,000 in one transaction overflow
    // max_locks_per_transaction's default).
    for (let from = 0; from < HOSTS; from += HOSTS_PER_COMMIT)
      await database.stationDb.transaction(async (db) => {
        const flush = async () => {
          if (batch.length === 0) return;
          await db.insert(snapshots).values(batch);
          rows += batch.length;
          batch = [];
        };
        for (let h = from; h < Math.min(HOSTS, from + HOSTS_PER_COMMIT); h++) {
          const scoutId = `host-${pad(h, 4)}`;
          const instanceId = `inst${pad(h, 12)}`;
          await db.insert(instances).values({
            scoutId,
            scoutInstanceId: instanceId,
            keyFingerprint: 'ab'.repeat(32),
            advertisedUrl: null,
            firstSeenAt: now - 40 * DAY_MS,
            lastSeenAt: now - 60_000,
          });
          const drillRows: (typeof drills.$inferInsert)[] = [];
          for (let j = 0; j < JOBS; j++) {
            const jobName = `job-${pad(j, 2)}`;
            const dir = join(dataDir, 'snapshots', scoutId, instanceId, jobName);
            // As the Station makes them (its umask is 077): private, so start-up has nothing to tighten.
            mkdirSync(dir, { recursive: true, mode: 0o700 });
            // Every 97th job stopped a week ago (stale), every 211th has a failed drill.
            const newest = (h * JOBS + j) % 97 === 0 ? now - 7 * DAY_MS : now - 3_600_000;
            let last = '';
            for (let s = 0; s < SNAPSHOTS; s++) {
              const taken = newest - (SNAPSHOTS - 1 - s) * DAY_MS;
              const filename = `${jobName}__${stamp(taken)}__${pad(h * JOBS + j, 8)}.tar.zst`;
              writeFileSync(join(dir, filename), '', { mode: 0o600 });
              batch.push({
                scoutId,
                scoutInstanceId: instanceId,
                jobName,
                filename,
                sizeBytes: 50_000_000 + ((s * 7919 + j * 104_729) % 5_000_000),
                sha256: pad(s, 64),
                fingerprint: pad(h * JOBS + j, 64),
                keyFingerprint: 'ab'.repeat(32),
                mtime: taken,
                storedAt: taken,
                takenAt: taken,
                unusual: null,
                missing: false,
              });
              last = filename;
            }
            drillRows.push({
              scoutId,
              scoutInstanceId: instanceId,
              jobName,
              filename: last,
              status: (h * JOBS + j) % 211 === 0 ? 'failed' : 'ok',
              files: 1000,
              bytes: 50_000_000,
              error: (h * JOBS + j) % 211 === 0 ? 'cannot decrypt the snapshot' : null,
              finishedAt: newest + 60_000,
              recordedAt: newest + 60_000,
            });
            if (batch.length >= 2000) await flush();
          }
          await db.insert(drills).values(drillRows);
        }
        await flush();
      });
  } finally {
    await database.close();
  }
  return { rows, seconds: (performance.now() - started) / 1000 };
}

/** What the page shows now and when: job rows, ms since navigation start. */
const SHAPE = `({ jobs: document.querySelectorAll('[data-job]').length, ms: performance.now() })`;

/** Polls until `jobs` job rows show (the CSP forbids waitForFunction's eval). */
async function waitForJobs(page: Page, jobs: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const shape = (await page.evaluate(SHAPE)) as { jobs: number; ms: number };
    if (shape.jobs >= jobs) return shape.ms;
    if (Date.now() > deadline) throw new Error(`${shape.jobs} job rows after 120 s, not ${jobs}`);
    await page.waitForTimeout(10);
  }
}

/** One database kind: seed it, start the Station on it, open the dashboard; true if both targets held. */
async function benchOn(kind: 'pglite' | 'postgres'): Promise<boolean> {
  // BENCH_OVERVIEW_DIR keeps a PGlite Station seeded there and starts on it again next time.
  const kept = kind === 'pglite' ? process.env.BENCH_OVERVIEW_DIR : undefined;
  if (kept) mkdirSync(kept, { recursive: true });
  const work = kept ?? mkdtempSync(join(tmpdir(), 'backupd-bench-overview-'));
  const dataDir = join(work, 'station');
  let server: PostgresServer | null = null;
  try {
    server = kind === 'postgres' ? await startPostgres() : null;
    const databaseUrl = server ? await createDatabase(server.url, 'overview') : undefined;
    if (kept && existsSync(join(work, 'seeded'))) console.log(`${kind}: reusing ${dataDir}`);
    else {
      const seeded = await seed(dataDir, databaseUrl);
      if (kept) writeFileSync(join(work, 'seeded'), `${seeded.rows}\n`);
      console.log(
        `${kind}: seeded ${seeded.rows} snapshots of ${HOSTS * JOBS} jobs in ${seeded.seconds.toFixed(1)} s`,
      );
    }
    const [station, browser] = await Promise.all([
      startServer('station', {
        entry: 'dist',
        dataDir,
        readyTimeoutMs: 300_000,
        ...(databaseUrl ? { env: { DATABASE_URL: databaseUrl } } : {}),
      }),
      launchBrowser(),
    ]);
    try {
      const startCpu = cpuSeconds(station.pid);
      const readyPeak = peakRssMib(station.pid);
      const { context, page } = await newPage(browser);
      await firstSignIn(page, station.url);
      const admin = await adminClient(station.url);
      const apiStarted = performance.now();
      const first = await admin.get(`${stationPaths.jobs()}?limit=${JOBS_PAGE_DEFAULT}`);
      const apiMs = performance.now() - apiStarted;
      if (first.status !== 200) throw new Error(`GET /api/jobs: ${first.status} ${first.text}`);
      const times: number[] = [];
      const { maxMib: servingMib } = await sampleRss(station.pid, async () => {
        for (let i = 0; i < 3; i++) {
          await page.goto(station.url);
          times.push(await waitForJobs(page, Math.min(JOBS_PAGE_DEFAULT, HOSTS * JOBS)));
        }
      });
      await context.close();
      const firstPageMs = Math.min(...times);
      const peak = peakRssMib(station.pid);
      const rows: [string, string, string][] = [
        [
          'seeded',
          `${HOSTS} hosts × ${JOBS} jobs × ${SNAPSHOTS} snapshots`,
          `${HOSTS * JOBS * SNAPSHOTS} rows`,
        ],
        [
          'dashboard first page (Chromium)',
          `${firstPageMs.toFixed(0)} ms`,
          `target < ${FIRST_PAGE_TARGET_MS} ms; runs ${times.map((t) => t.toFixed(0)).join(', ')} ms`,
        ],
        [
          'GET /api/jobs first page',
          `${apiMs.toFixed(0)} ms`,
          `${JOBS_PAGE_DEFAULT} jobs, ${(first.text.length / 1024).toFixed(0)} KiB`,
        ],
        ['Station peak RSS', `${peak.toFixed(0)} MiB`, `target < ${RSS_TARGET_MIB} MiB (start-up included)`],
        [
          '  of which by ready',
          `${readyPeak.toFixed(0)} MiB`,
          'start-up: migrations, reconcile of the index',
        ],
        ['  RSS while serving the pages', `${servingMib.toFixed(0)} MiB`, 'highest sample, every 100 ms'],
        [
          'Station CPU after start',
          `${(cpuSeconds(station.pid) - startCpu).toFixed(2)} s`,
          'sign-in and 4 pages',
        ],
      ];
      console.log(
        `\n| overview at scale, ${kind === 'pglite' ? 'PGlite (embedded default)' : 'PostgreSQL (DATABASE_URL)'} | value | note |\n| --- | --- | --- |`,
      );
      for (const [what, value, note] of rows) console.log(`| ${what} | ${value} | ${note} |`);
      const ok = firstPageMs < FIRST_PAGE_TARGET_MS && peak < RSS_TARGET_MIB;
      console.log(`\noverview bench on ${kind}: ${ok ? 'both targets met' : 'a target was missed'}`);
      return ok;
    } finally {
      await browser.close();
      await (kept ? station.stop() : station.dispose());
      if (kept)
        console.log(
          station
            .output()
            .split('\n')
            .filter((l) => !l.includes('"mod":"http"'))
            .slice(-8)
            .join('\n'),
        );
    }
  } finally {
    await server?.stop();
    if (!kept) rmSync(work, { recursive: true, force: true });
  }
}

const kinds = (process.env.BENCH_DATABASES ?? 'pglite,postgres').split(',').map((k) => k.trim());
for (const kind of kinds) {
  if (kind !== 'pglite' && kind !== 'postgres')
    throw new Error(`BENCH_DATABASES: "${kind}" is neither pglite nor postgres`);
  await benchOn(kind);
}
