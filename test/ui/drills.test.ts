// Restore drills on both dashboards in a real Chromium against a real Scout paired with a real
// Station (the built bundle): "Run a drill" on a job in the Scout console runs a real drill and
// both dashboards show "Last proven restorable"; the drill schedule is a Scout setting; a job not
// proven within twice the schedule is flagged (the Scout reads its own schedule, the Station
// assumes the default weekly one: 14 days, and decides it on its own clock, which the test moves),
// seen through pages whose clock runs days ahead; after
// the Station's copy of the snapshot is damaged, "Drill all jobs" fails the drill and both
// dashboards show a red "Drill failed" badge with the drill's error as its tooltip. Tests run in order.
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { DAY_MS } from '../../src/core/clock.ts';
import { firstSignIn, newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { connectScout, jobState, runNow, scoutDataDir, waitIdle } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';

const skip = skipUnlessChromium() || skipUnlessPrograms(['tar']);
const SCOUT_ID = 'drill-ui-scout';

interface Drill {
  filename: string;
  status: 'ok' | 'failed';
  error: string | null;
}

/** Waits (up to ~20 s) until `read` gives a value `accept` takes; a read that throws counts as none. */
async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  let value: T | undefined;
  const deadline = Date.now() + 60_000;
  for (;;) {
    value = await read().catch(() => undefined);
    if ((value !== undefined && accept(value)) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(value !== undefined && accept(value), `${what}: got ${JSON.stringify(value)}`);
  return value;
}

/** Flips one byte in the middle of the Station's stored copy of `filename`. */
function damage(station: TestServer, filename: string): void {
  const root = join(station.dataDir, 'snapshots');
  const found = readdirSync(root, { recursive: true, withFileTypes: true }).find(
    (d) => d.isFile() && d.name === filename,
  );
  assert.ok(found, `${filename} is stored under ${root}`);
  const file = join(found.parentPath, found.name);
  const at = Math.floor(statSync(file).size / 2);
  const fd = openSync(file, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    writeSync(fd, Buffer.from([(byte[0] ?? 0) ^ 0xff]), 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

describe('Restore drills on both dashboards', { skip }, () => {
  let ui: Ui;
  let station: TestServer;
  let scout: TestServer;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  const contexts: BrowserContext[] = [];
  let scoutPage: Page;
  let stationPage: Page;
  let snapshot = '';

  const lastDrill = async () =>
    ((await jobState(scoutAdmin, 'docs')) as unknown as { last_drill: Drill | null }).last_drill;
  const scoutJob = (page: Page) => page.getByRole('article', { name: 'docs', exact: true });
  const stationJob = (page: Page) => page.getByRole('article', { name: 'Job docs' });
  const proven = (card: Locator) => card.getByTestId('last-proven');
  /** Short reads inside `until`: the default 15 s wait would stall every retry. */
  const quick = { timeout: 1_000 };

  async function open(baseUrl: string, first: boolean, aheadMs = 0): Promise<Page> {
    const { context, page } = await newPage(ui.browser);
    contexts.push(context);
    await page.clock.install({ time: Date.now() + aheadMs });
    await (first ? firstSignIn(page, baseUrl) : signIn(page, baseUrl, 'admin', ADMIN_PASSWORD));
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return page;
  }

  before(async () => {
    const dirs = scoutDataDir('backupd-drill-ui-');
    buildTree(join(dirs.scanRoot, 'docs'), {
      '.upload_dir': '',
      'a.txt': 'alpha',
      'sub/b.bin': Buffer.alloc(20_000, 3),
    });
    ui = await startUi({
      // From the source (serving the built web app): the test moves the Station's clock.
      station: { entry: 'source' },
      scout: { dataDir: dirs.dataDir },
      clock: true,
      firstSignIn: 'scout',
    });
    ({ station, scout, page: scoutPage } = ui);
    stationPage = await open(station.url, true);
    [scoutAdmin, stationAdmin] = await Promise.all([adminClient(scout.url), adminClient(station.url)]);
    await connectScout(scoutAdmin, stationAdmin, SCOUT_ID);
    await runNow(scoutAdmin, { timeoutMs: 60_000 });
    const state = await jobState(scoutAdmin, 'docs');
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    snapshot = String(state.last_stored_as);
  });

  after(async () => {
    for (const context of contexts) await context.close();
    await ui?.close();
  });

  test('before any drill both dashboards say "never", without a red badge yet', async () => {
    await scoutPage.goto(`${scout.url}/jobs`);
    const card = scoutJob(scoutPage);
    assert.equal(await proven(card).innerText(), 'never');
    assert.equal(await card.getByTestId('drill-badge').count(), 0);
    await stationPage.goto(station.url);
    const job = stationJob(stationPage);
    assert.equal(await proven(job).innerText(), 'never');
    assert.equal(await job.getByTestId('drill-badge').count(), 0, 'the snapshot is minutes old');
  });

  test('"Run a drill" on a job runs a real drill; both dashboards show it as last proven restorable', async () => {
    const card = scoutJob(scoutPage);
    await card.getByRole('button', { name: 'Run a drill' }).click();
    await card.getByRole('status').filter({ hasText: 'Restore drill of docs started' }).waitFor();
    await waitIdle(scoutAdmin);
    const drill = await lastDrill();
    assert.equal(drill?.status, 'ok', drill?.error ?? 'a drill ran');
    assert.equal(drill?.filename, snapshot);
    // The page polls faster while the drill runs, then reloads the jobs when it is idle again.
    await until(
      async () => {
        await scoutPage.clock.fastForward(15_000);
        return proven(card).innerText(quick);
      },
      (text) => text === 'just now',
      'the Scout job shows the drill',
    );
    assert.match(await card.locator('dt', { hasText: 'Last proven restorable' }).innerText(), /Last proven/);
    assert.equal(await card.getByTestId('drill-badge').count(), 0);
    const job = stationJob(stationPage);
    await until(
      async () => {
        await stationPage.clock.fastForward(15_000);
        return proven(job).innerText(quick);
      },
      (text) => text === 'just now',
      'the Station job shows the drill',
    );
    assert.match(await job.innerText(), /Last proven restorable\s+just now/);
    assert.equal(await job.getByTestId('drill-badge').count(), 0);
    await screenshot(scoutPage, 'drill-scout-proven');
    await screenshot(stationPage, 'drill-station-proven');
  });

  test('the drill schedule is a Scout setting with a hint; an empty one turns drills off', async () => {
    await scoutPage
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Settings', exact: true })
      .click();
    const field = scoutPage.getByLabel('Drill schedule');
    await until(
      () => field.inputValue(quick),
      (value) => value === '0 4 * * 0',
      'the default drill schedule is shown',
    );
    assert.match(
      await scoutPage.locator(`#${await field.getAttribute('aria-describedby')}`).innerText(),
      /Sundays at 04:00[\s\S]*empty to turn scheduled drills off/,
    );
    await field.fill('not a cron');
    await scoutPage.getByRole('button', { name: 'Save Scout settings' }).click();
    assert.match(
      await scoutPage.getByRole('alert').innerText(),
      /drill_schedule.*is not a valid cron expression/,
    );
    await field.fill('');
    await scoutPage.getByRole('button', { name: 'Save Scout settings' }).click();
    await scoutPage.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.equal((await scoutAdmin.get('/api/settings')).body.settings.drill_schedule, '');
    // Daily, so twice the schedule is 2 days on the Scout (the Station still assumes 14).
    await field.fill('30 3 * * *');
    await scoutPage.getByRole('button', { name: 'Save Scout settings' }).click();
    await scoutPage.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const settings = (await scoutAdmin.get('/api/settings')).body.settings;
    assert.equal(settings.drill_schedule, '30 3 * * *');
    assert.equal(settings.scout_id, SCOUT_ID, 'the other settings were kept');
    await scoutPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Status' }).click();
    assert.equal(
      await scoutPage.getByTestId('drill-schedule').innerText(),
      '30 3 * * * · every day at 03:30',
      'the cron expression with its meaning in words',
    );
  });

  test('no drill passed within twice the schedule: "Not proven recently" (Scout: its schedule, Station: 14 days)', async () => {
    const scoutLater = await open(scout.url, false, 3 * DAY_MS);
    await scoutLater.goto(`${scout.url}/jobs`);
    const card = scoutJob(scoutLater);
    assert.equal(await proven(card).innerText(), '3 d ago');
    const badge = card.getByTestId('drill-badge');
    assert.equal(await badge.innerText(), 'Not proven recently');
    assert.match(String(await badge.getAttribute('title')), /within twice the drill schedule \(2 days\)/);

    station.advanceClock(3 * DAY_MS);
    const stationSoon = await open(station.url, false, 3 * DAY_MS);
    assert.equal(await proven(stationJob(stationSoon)).innerText(), '3 d ago');
    assert.equal(await stationJob(stationSoon).getByTestId('drill-badge').count(), 0, 'within 14 days');
    station.advanceClock(12 * DAY_MS);
    const stationLater = await open(station.url, false, 15 * DAY_MS);
    const job = stationJob(stationLater);
    assert.equal(await proven(job).innerText(), '15 d ago');
    assert.equal(await job.getByTestId('drill-badge').innerText(), 'Not proven recently');
    assert.match(
      String(await job.getByTestId('drill-badge').getAttribute('title')),
      /twice the drill schedule \(14 days\)/,
    );
    // Back to today for the next test; the sign-ins 15 days on removed the first page's expired
    // session (7 days), so that page signs in again.
    station.advanceClock(-15 * DAY_MS);
    stationPage = await open(station.url, false);
  });

  test('"Drill all jobs" on a damaged snapshot: a red "Drill failed" badge with the error, on both dashboards', async () => {
    damage(station, snapshot);
    await scoutPage.goto(`${scout.url}/jobs`);
    await Promise.all([
      scoutPage.waitForResponse((r) => r.request().method() === 'POST' && /drill/.test(r.url())),
      scoutPage.getByRole('button', { name: 'Drill all jobs' }).click(),
    ]);
    // The "started" notice clears once the Scout is idle again, which a small drill reaches
    // before a loaded browser may draw it: the drill's record below proves the click started it.
    await waitIdle(scoutAdmin);
    const drill = await lastDrill();
    assert.equal(drill?.status, 'failed');
    const error = String(drill?.error);
    const card = scoutJob(scoutPage);
    const badge = card.getByTestId('drill-badge');
    await until(
      async () => {
        await scoutPage.clock.fastForward(15_000);
        return badge.count();
      },
      (n) => n === 1,
      'the Scout job shows the failed drill',
    );
    assert.equal(await badge.innerText(), 'Drill failed');
    assert.ok(String(await badge.getAttribute('title')).includes(error), 'the error is the tooltip');
    assert.match(
      await proven(card).innerText(),
      /^not since the last drill \(failed (just now|\d+ min ago)\)$/,
    );
    assert.equal(
      await badge.evaluate((el) => el.classList.contains('bad')),
      true,
      'the badge has the red tone',
    );

    const job = stationJob(stationPage);
    const stationBadge = job.getByTestId('drill-badge');
    await until(
      async () => {
        await stationPage.clock.fastForward(15_000);
        return stationBadge.count();
      },
      (n) => n === 1,
      'the Station job shows the failed drill',
    );
    assert.equal(await stationBadge.innerText(), 'Drill failed');
    assert.ok(String(await stationBadge.getAttribute('title')).includes(error));
    assert.equal(await stationBadge.evaluate((el) => el.classList.contains('bad')), true);
    await stationPage.getByText('What the flags mean').click();
    assert.match(
      await stationPage.locator('details').innerText(),
      /Drill failed[\s\S]*Not proven recently No restore drill passed in the last 14 days/,
    );
    await stationBadge.scrollIntoViewIfNeeded();
    await screenshot(scoutPage, 'drill-scout-failed');
    await screenshot(stationPage, 'drill-station-failed');
  });
});
