// The Station dashboard at the size of a small office: 20 hosts × 10 jobs × 50 snapshots
// (10,000), seeded as files on the Station's disk that its start-up reconcile indexes (no
// 10,000 uploads). Jobs come a page at a time (GET /api/jobs: 100, then more on scroll or on
// "Show more jobs"); each job is one row (health, newest, count, size chart) with its snapshots
// fetched on demand; jobs that are stale come first in their Scout; filters narrow to a host or
// a job and to a health. The page's size is asserted (DOM nodes bounded, nothing listed per
// snapshot until asked); the time to show is measured and reported, never asserted.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HOUR_MS } from '../../src/core/clock.ts';
import { JOBS_PAGE_DEFAULT } from '../../src/shared/protocol/jobs.ts';
import {
  firstSignIn,
  launchBrowser,
  newPage,
  SCREENSHOT_DIR,
  skipUnlessChromium,
} from '../helpers/browser.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = skipUnlessChromium();
const HOSTS = 20;
const JOBS = 10;
const SNAPSHOTS = 50;
/** Every host's job-03 last stored a snapshot five days ago: stale. */
const STALE_JOB = 'job-03';
/** Jobs on the first page (JOBS_PAGE_DEFAULT). */
const FIRST_PAGE = JOBS_PAGE_DEFAULT;

const pad = (n: number) => String(n).padStart(2, '0');
const stamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');

/** Writes the snapshot files under `<dataDir>/snapshots`, as a Station would have stored them. */
function seed(dataDir: string): void {
  const now = Date.now();
  for (let h = 1; h <= HOSTS; h++) {
    for (let j = 1; j <= JOBS; j++) {
      const jobName = `job-${pad(j)}`;
      const dir = join(dataDir, 'snapshots', `host-${pad(h)}`, `inst${pad(h)}000000000001`, jobName);
      mkdirSync(dir, { recursive: true });
      const newest = jobName === STALE_JOB ? now - 5 * 24 * HOUR_MS : now - HOUR_MS;
      for (let s = 0; s < SNAPSHOTS; s++) {
        const taken = newest - (SNAPSHOTS - 1 - s) * HOUR_MS;
        const file = join(
          dir,
          `${jobName}__${stamp(taken)}__${(h * 1000 + j * 50 + s).toString(16).padStart(8, '0')}.tar.zst`,
        );
        writeFileSync(file, Buffer.alloc(1000 + ((s * 37 + j * 11) % 200)));
        utimesSync(file, taken / 1000, taken / 1000);
      }
    }
  }
}

/** What the page holds now: job rows, elements, height and the time since navigation start. */
const SHAPE = `({
  jobs: document.querySelectorAll('[data-job]').length,
  nodes: document.getElementsByTagName('*').length,
  height: document.documentElement.scrollHeight,
  ms: performance.now(),
  api: performance.getEntriesByType('resource').find((e) => e.name.includes('/api/jobs'))?.responseEnd ?? null,
})`;
/** Job rows, elements, height, ms since navigation start, and when the first page's answer had arrived. */
type Shape = { jobs: number; nodes: number; height: number; ms: number; api: number | null };

/** Polls the page (the CSP forbids waitForFunction's eval) until `jobs` job rows show. */
async function waitForJobs(page: Page, jobs: number, timeoutMs = 60_000): Promise<Shape> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const shape = (await page.evaluate(SHAPE)) as Shape;
    if (shape.jobs === jobs) return shape;
    if (Date.now() > deadline) throw new Error(`${shape.jobs} job rows, not ${jobs}`);
    await page.waitForTimeout(10);
  }
}

describe('Station dashboard at 10,000 snapshots', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const jobRows = () => page.locator('[data-job]');

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backupd-station-scale-'));
    seed(dataDir);
    [server, browser] = await Promise.all([
      // Its first start hashes and indexes 10,000 files: a generous bound on a loaded machine.
      startServer('station', { entry: 'dist', dataDir, readyTimeoutMs: 240_000 }),
      launchBrowser(),
    ]);
    ({ context, page } = await newPage(browser));
    await firstSignIn(page, server.url);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('the first page shows 100 job rows quickly, without a node per snapshot', async (t) => {
    await page.goto(server.url);
    // Time to show: from navigation start until the first page's job rows are on the page.
    const shape = await waitForJobs(page, FIRST_PAGE);
    const summary =
      `${HOSTS * JOBS * SNAPSHOTS} snapshots: first ${FIRST_PAGE} jobs shown in ${Math.round(shape.ms)} ms ` +
      `(the jobs answer in at ${Math.round(shape.api ?? 0)} ms), ${shape.nodes} DOM nodes, ${shape.height} px tall`;
    t.diagnostic(summary);
    console.log(`station-scale: ${summary}`);
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'station-overview-10000.png') });

    assert.equal(await page.locator('tr[data-snapshot]').count(), 0, 'no snapshot is listed until asked');
    assert.ok(shape.nodes < 6_000, `${shape.nodes} DOM nodes for ${FIRST_PAGE} jobs`);
    assert.equal(await page.locator('svg.chart').count(), FIRST_PAGE, 'one size chart per job');
    assert.equal(
      await page.getByRole('button', { name: 'Show more jobs' }).innerText(),
      `Show more jobs (${HOSTS * JOBS - FIRST_PAGE} more)`,
    );
  });

  test('in each Scout the stale job comes first', async () => {
    const scout = page.getByRole('region', { name: 'Scout host-07' });
    const first = scout.locator('[data-job]').first();
    assert.equal(await first.getAttribute('data-job'), `host-07/inst07000000000001/${STALE_JOB}`);
    assert.equal(await first.getByTestId('job-health').innerText(), 'Stale');
    assert.equal(await scout.getByTestId('job-health').filter({ hasText: 'OK' }).count(), JOBS - 1);
  });

  test("a job's snapshots are fetched on demand, newest first, and close again", async () => {
    const row = page.locator('[data-job="host-02/inst02000000000001/job-05"]');
    const toggle = row.getByRole('button', { name: /Snapshots of job-05/ });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/jobs/host-02/inst02000000000001/job-05/snapshots')),
      toggle.click(),
    ]);
    assert.equal(answer.status(), 200);
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const rows = row.locator('tr[data-snapshot]');
    await rows.first().waitFor();
    assert.equal(await rows.count(), SNAPSHOTS);
    const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-snapshot') ?? ''));
    assert.deepEqual(names, [...names].sort().reverse(), 'newest first');
    await toggle.click();
    assert.equal(await page.locator('tr[data-snapshot]').count(), 0);
  });

  test('more jobs load as the list scrolls to its end, then the "more" button is gone', async () => {
    const more = page.getByRole('button', { name: /^Show more jobs/ });
    await more.scrollIntoViewIfNeeded();
    const shape = await waitForJobs(page, HOSTS * JOBS);
    assert.equal(await more.count(), 0, 'every job is shown');
    const hosts = await page.getByRole('region', { name: /^Scout / }).count();
    assert.equal(hosts, HOSTS, 'a Scout split across two pages is shown once');
    assert.ok(shape.nodes < 10_000, `${shape.nodes} DOM nodes for ${HOSTS * JOBS} jobs`);
  });

  test('the filters narrow to a host, a job or a health, and back', async () => {
    const filter = page.getByLabel('Filter by host or job');
    await filter.fill('host-11');
    await waitForJobs(page, JOBS);
    assert.equal(await page.getByRole('region', { name: /^Scout / }).count(), 1);
    await filter.fill('job-07');
    await waitForJobs(page, HOSTS);
    for (const data of await jobRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')))) {
      assert.match(String(data), /\/job-07$/);
    }
    await filter.fill('no-such-thing');
    await page.getByText('No job or host matches').waitFor();
    await filter.fill('');
    await waitForJobs(page, FIRST_PAGE);

    const health = page.getByLabel('Health');
    assert.deepEqual(await health.locator('option').allInnerTexts(), [
      'All jobs',
      'Failing (0)',
      `Stale (${HOSTS})`,
      'Not proven (0)',
      `OK (${HOSTS * (JOBS - 1)})`,
    ]);
    await health.selectOption('stale');
    await waitForJobs(page, HOSTS);
    assert.deepEqual(
      [...new Set(await page.getByTestId('job-health').allInnerTexts())],
      ['Stale'],
      'only the stale jobs',
    );
    await health.selectOption('failing');
    await page.getByText('No job or host matches (failing jobs).').waitFor();
    await health.selectOption('');
    await waitForJobs(page, FIRST_PAGE);
  });

  test('at phone width the rows stack and the page does not scroll sideways', async () => {
    const phone = await newPage(browser, { viewport: 'phone' });
    await phone.context.addCookies(await context.cookies());
    await phone.page.goto(server.url);
    await waitForJobs(phone.page, FIRST_PAGE);
    const width = Number(await phone.page.evaluate('document.documentElement.scrollWidth'));
    assert.ok(width <= 390, `no sideways scrolling (${width}px)`);
    await phone.page.screenshot({ path: join(SCREENSHOT_DIR, 'station-overview-10000-phone.png') });
    await phone.context.close();
  });
});
