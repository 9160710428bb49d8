// Off-site copy in the web UIs, in a real Chromium against two real Stations (the primary the
// built bundle, the replica the source, whose clock the test moves; the bundle reads real time):
// a `replicate` token is created on the primary's Tokens page, the replica is set up on its
// Settings page (the token is never shown back), "Copy now" copies, and the replica's overview
// shows each job with its lag while a copy runs and the failure when the primary is gone; the
// primary's overview shows which replica pulled and when. Screenshots: replication-*.png.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { firstSignIn, launchBrowser, newPage, screenshot, skipUnlessChromium } from '../helpers/browser.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { archiveMeta, upload } from '../helpers/uploads.ts';

const skip = skipUnlessChromium();
const R = { scout_id: 'nas-host', scout_instance_id: 'inst0000000000000007', job_name: 'photos' };

describe('web UIs: off-site copy', { skip }, () => {
  let primary: TestServer;
  let replica: TestServer;
  let browser: Browser;
  let primaryAdmin: Client;
  let credential = '';
  const pages: Record<'primary' | 'replica', { context: BrowserContext; page: Page } | null> = {
    primary: null,
    replica: null,
  };
  let token = '';

  before(async () => {
    [primary, replica, browser] = await Promise.all([
      startServer('station', { entry: 'dist' }),
      startServer('station', { entry: 'source' }),
      launchBrowser(),
    ]);
    pages.primary = await newPage(browser);
    pages.replica = await newPage(browser);
    await firstSignIn(pages.primary.page, primary.url);
    await firstSignIn(pages.replica.page, replica.url);
    primaryAdmin = await adminClient(primary.url);
    const minted = await primaryAdmin.post('/api/credentials/mint', {});
    credential = minted.body.credential;
    const data = randomBytes(30_000);
    const stored = await upload(primary.url, credential, data, archiveMeta(data, R));
    assert.equal(stored.finalize?.status, 200);
  });

  after(async () => {
    await pages.primary?.context.close();
    await pages.replica?.context.close();
    await browser?.close();
    await primary?.dispose();
    await replica?.dispose();
  });

  test('the primary creates a replicate token on its Tokens page', async () => {
    const page = pages.primary?.page as Page;
    await page.goto(`${primary.url}/tokens`);
    const form = page.getByRole('form', { name: 'Create an automation token' });
    await form.getByLabel('Name').fill('offsite-nas');
    await form.getByRole('checkbox', { name: /replicate/ }).check();
    await form.getByRole('button', { name: 'Create token' }).click();
    token = (await page.getByTestId('secret').innerText()).trim();
    assert.match(token, /^bkd_at_/);
    await screenshot(page, 'replication-primary-token');
  });

  test('the replica is set up on its Settings page and copies on "Copy now"', async () => {
    const page = pages.replica?.page as Page;
    await page.goto(`${replica.url}/settings`);
    const form = page.getByRole('form', { name: 'Off-site copy settings' });
    await form.getByLabel('Primary Station address').fill(primary.url);
    await form.getByLabel('Replication token').fill(token);
    await form.getByLabel('Schedule (cron)').fill('');
    await form.getByRole('button', { name: 'Save off-site copy' }).click();
    await form.getByText('Saved.').waitFor();
    assert.equal(await form.getByLabel('Replication token').inputValue(), '', 'the token is not shown back');
    assert.equal(
      await form.getByLabel('Replication token').getAttribute('placeholder'),
      'set (leave empty to keep it)',
    );
    await screenshot(page, 'replication-replica-settings');

    await page.goto(replica.url);
    const card = page.getByRole('region', { name: 'Off-site copy (this Station is a replica)' });
    await card.getByRole('button', { name: 'Copy now' }).click();
    const row = card.getByTestId('replication-jobs').getByRole('row', { name: /nas-host/ });
    await row.getByText('up to date').waitFor();
    await screenshot(page, 'replication-replica-up-to-date');
  });

  test('while a copy runs the lag shows; when the primary is gone the failure shows', async () => {
    const data = randomBytes(400_000);
    const later = archiveMeta(data, { ...R, timestamp: '2026-11-02T12:00:00Z' });
    assert.equal((await upload(primary.url, credential, data, later)).finalize?.status, 200);
    const replicaAdmin = await adminClient(replica.url);
    const slow = await replicaAdmin.post('/api/settings', { replication_bytes_per_second: 20_000 });
    assert.equal(slow.status, 200);
    const page = pages.replica?.page as Page;
    await page.goto(replica.url);
    const card = page.getByRole('region', { name: 'Off-site copy (this Station is a replica)' });
    await card.getByRole('button', { name: 'Copy now' }).click();
    await card.getByText('Copying').first().waitFor();
    await card
      .getByTestId('replication-jobs')
      .getByText(/behind/)
      .waitFor();
    await screenshot(page, 'replication-replica-lagging');

    // The primary shows the replica that pulled.
    const primaryPage = pages.primary?.page as Page;
    await primaryPage.goto(primary.url);
    const replicas = primaryPage.getByRole('region', { name: 'Replicas pulling from this Station' });
    await replicas.getByRole('row', { name: /offsite-nas/ }).waitFor();
    await screenshot(primaryPage, 'replication-primary-replicas');

    // The slow copy ends (the bytes were on their way); then the primary is gone. The limit
    // paces by the replica's clock (src/station/replication/throttle.ts): moved past the 20 s
    // that 400,000 bytes take at 20,000 bytes/s, the rest passes at once, not in real time.
    replica.advanceClock(30_000);
    await card
      .getByTestId('replication-jobs')
      .getByText('up to date')
      .waitFor({ timeout: 60_000 })
      .catch(async (error: unknown) => {
        await screenshot(page, 'replication-replica-not-done');
        throw error;
      });
    await primary.kill();
    await card.getByRole('button', { name: 'Copy now' }).click();
    await card.getByTestId('replication-error').waitFor({ timeout: 60_000 });
    const error = await card.getByTestId('replication-error').innerText();
    assert.match(error, /not copied|cannot be reached/);
    await screenshot(page, 'replication-replica-failed');
  });
});
