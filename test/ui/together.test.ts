// The two web UIs together, in a real Chromium against a real Station and Scout (the
// bundle): a Station token minted in the dashboard and pasted into the Scout console lets a
// run-now from the console upload a snapshot, which the dashboard shows within one refresh;
// a restore request made in the dashboard is accepted in the console and the files return.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { firstSignIn, launchBrowser, newPage, screenshot, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree, jobTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, Client } from '../helpers/http.ts';
import { scoutDataDir, waitIdle } from '../helpers/scout.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = skipUnlessChromium();
const JOB = 'family-photos';
const REFRESH_MS = 15_000;

describe('Station dashboard and Scout console together', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let browser: Browser;
  let dashboard: Page;
  let console_: Page;
  let source: string;
  let original: ReturnType<typeof jobTree>;

  before(async () => {
    const { dataDir, scanRoot } = scoutDataDir('backupd-ui-together-');
    source = buildTree(join(scanRoot, JOB), {
      '.upload_dir': '',
      'beach.jpg': Buffer.from(Array.from({ length: 90_000 }, (_, i) => (i * 31) % 256)),
      'notes/where.txt': 'the beach, summer 2026\n',
      'notes/empty/': null,
    });
    original = jobTree(source);
    const noStation = { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: 'family-laptop' };
    [station, scout, browser] = await Promise.all([
      startServer('station', { entry: 'dist' }),
      startServer('scout', { entry: 'dist', dataDir, env: noStation }),
      launchBrowser(),
    ]);
    dashboard = (await newPage(browser)).page;
    console_ = (await newPage(browser)).page;
    // The dashboard's clock is moved instead of waiting 15 s for its refresh.
    await dashboard.clock.install();
    await Promise.all([firstSignIn(dashboard, station.url), firstSignIn(console_, scout.url)]);
  });

  after(async () => {
    await browser?.close();
    await scout?.dispose();
    await station?.dispose();
  });

  test('a token minted in the dashboard lets a run-now from the console upload; the dashboard shows it after one refresh', async () => {
    // Dashboard: mint a Station token; it is shown once with the lines for the host.
    await dashboard.getByRole('link', { name: 'Station tokens' }).click();
    await dashboard.getByRole('button', { name: 'Mint token' }).click();
    const credential = (await dashboard.getByTestId('secret').innerText()).trim();
    assert.match(credential, /\S{20,}/);
    assert.match(
      await dashboard.getByTestId('env-lines').innerText(),
      new RegExp(`SCOUT_CREDENTIAL=${credential}`),
    );

    // Console: paste it into the settings with the Station's address.
    await console_.getByRole('link', { name: 'Settings', exact: true }).click();
    await console_.getByLabel('Station URL').fill(station.url);
    await console_.getByLabel('Station token', { exact: true }).fill(credential);
    await console_.getByRole('button', { name: 'Save Scout settings' }).click();
    await console_.getByText('Saved. The Station answered and accepted the token.').waitFor();

    // The dashboard shows no job yet.
    await dashboard.getByRole('link', { name: 'Overview' }).click();
    await dashboard.getByRole('heading', { name: 'Storage' }).first().waitFor();
    assert.equal(await dashboard.getByLabel(`Job ${JOB}`).count(), 0);

    // Console: Back up now on the job, and wait until the cycle is over.
    await console_.getByRole('link', { name: 'Jobs' }).click();
    await console_.getByRole('article', { name: JOB }).getByRole('button', { name: 'Back up now' }).click();
    const scoutApi = new Client(scout.url);
    assert.equal((await scoutApi.login('admin', ADMIN_PASSWORD)).status, 200);
    await waitIdle(scoutApi);
    await console_
      .getByRole('article', { name: JOB })
      .getByText(/uploaded/i)
      .first()
      .waitFor();
    await screenshot(console_, 'together-scout-jobs-after-run');

    // Dashboard: one refresh later the job is there with its snapshot.
    await dashboard.clock.fastForward(REFRESH_MS);
    const job = dashboard.getByLabel(`Job ${JOB}`);
    await job.waitFor({ timeout: 30_000 });
    await job.getByRole('button', { name: /^Snapshots of / }).click();
    // The job's snapshots are fetched when it opens.
    await job.getByRole('button', { name: /^Request restore of / }).waitFor();
    assert.equal(await job.getByRole('button', { name: /^Request restore of / }).count(), 1);
    await screenshot(dashboard, 'together-station-overview');
  });

  test('a restore request from the dashboard is accepted in the console and the files come back', async () => {
    // Disaster on the host: a file deleted, another changed.
    rmSync(join(source, 'beach.jpg'));
    writeFileSync(join(source, 'notes', 'where.txt'), 'overwritten by mistake\n');
    assert.notDeepEqual(jobTree(source), original);

    // Dashboard: request a restore of the snapshot to its own instance.
    const job = dashboard.getByLabel(`Job ${JOB}`);
    await job.getByRole('button', { name: /^Request restore of / }).click();
    const dialog = dashboard.getByRole('dialog', { name: 'Request restore' });
    await dialog.getByRole('button', { name: 'Send request' }).click();
    const sent = dashboard.getByRole('dialog', { name: 'Restore request sent' });
    await sent.waitFor();
    const outcome = await sent.innerText();
    assert.match(outcome, /pending/);
    // The Scout announced no ADVERTISED_URL: the `notified` outcome says it was not told.
    assert.match(outcome, /could not be notified/);
    await screenshot(dashboard, 'together-station-restore-requested');
    await sent.getByRole('button', { name: 'Done' }).click();

    // Console: the request is listed; accept it into the job's folder.
    await console_.getByRole('link', { name: 'Restore' }).click();
    const requests = console_.getByRole('region', { name: 'Restore requests from the Station' });
    await requests.getByRole('button', { name: 'Accept', exact: true }).first().click();
    await console_.getByRole('button', { name: 'Accept and restore' }).click();
    await requests.getByText(/^Restored /).waitFor({ timeout: 30_000 });
    await screenshot(console_, 'together-scout-restored');

    assert.deepEqual(jobTree(source), original, 'the deleted and the changed file are back as they were');
  });
});
