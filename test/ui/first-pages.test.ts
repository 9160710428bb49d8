// The first page of each app, in a real Chromium against a real Scout and Station (the built
// bundle). The Scout's Status answers "are my backups OK?": every job with its last result
// (a failed one first, its badge chosen by last_error_code), last success, newest snapshot's
// size, next run and a per-job Back up now. At phone width the navigation folds behind a menu
// button on both apps. Screenshots of both first pages at desktop and phone width.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree } from '../helpers/files.ts';
import { sha256 } from '../helpers/hashes.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import {
  connectScout,
  jobState,
  mintStationToken,
  runNow,
  saveStationSettings,
  scoutDataDir,
  waitIdle,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';

const skip = skipUnlessChromium();
const SCOUT_ID = 'first-page';

describe('the first pages', { skip }, () => {
  let ui: Ui;
  let station: TestServer;
  let scout: TestServer;
  let page: Page;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let scanRoot: string;
  let token: string;

  const backups = () => page.getByRole('region', { name: 'Backups' });
  const rows = () => backups().locator('tbody tr');

  before(async () => {
    const dirs = scoutDataDir('backupd-first-page-');
    scanRoot = dirs.scanRoot;
    buildTree(scanRoot, {
      'docs/.upload_dir': '',
      'docs/a.txt': 'alpha'.repeat(1000),
      'mail/.upload_dir': '',
      'mail/inbox.txt': 'hello',
    });
    ui = await startUi({ scout: { dataDir: dirs.dataDir } });
    ({ station, scout, page } = ui);
    [scoutAdmin, stationAdmin] = await Promise.all([adminClient(scout.url), adminClient(station.url)]);
    token = await connectScout(scoutAdmin, stationAdmin, SCOUT_ID);
    await runNow(scoutAdmin, { timeoutMs: 60_000 });
    // The token is revoked and mail changes: its next upload is refused (token_rejected).
    const hash = sha256(token);
    assert.equal((await stationAdmin.delete(`/api/credentials/${hash}`)).status, 200);
    writeFileSync(join(scanRoot, 'mail', 'inbox.txt'), 'hello again');
    await runNow(scoutAdmin, { timeoutMs: 60_000 });
    const mail = await jobState(scoutAdmin, 'mail');
    assert.equal(mail.last_status, 'failed');
    await signIn(page, scout.url, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await ui?.close();
  });

  test('Status lists every job, the failed one first with a badge by its code', async () => {
    await page.getByRole('heading', { name: 'Status', exact: true }).waitFor();
    await rows().nth(1).waitFor();
    assert.equal(await page.getByTestId('verdict').innerText(), '1 of 2 jobs failed: see below.');
    const [first, second] = [rows().nth(0), rows().nth(1)];
    assert.equal(await first.getAttribute('data-job'), 'mail');
    const badge = first.getByTestId('error-code');
    assert.equal(await badge.getAttribute('data-code'), 'token_rejected');
    assert.equal(await badge.innerText(), 'Station token refused');
    assert.match(await first.innerText(), /failed/);
    assert.equal(await second.getAttribute('data-job'), 'docs');
    const docs = await jobState(scoutAdmin, 'docs');
    assert.ok(Number((docs as { last_stored_bytes?: number }).last_stored_bytes) > 0);
    assert.match(await second.innerText(), /unchanged/);
    assert.match(await second.innerText(), /\d+(\.\d+)? (B|KiB)/, "the newest snapshot's size");
    assert.match(await second.innerText(), /ago|just now/, 'when it last succeeded');
    assert.match(await second.innerText(), /in \d+ (min|h|d|mo)/, 'the next run');
    // The Station answered the last upload with the token refused, and the page says so by code.
    assert.equal(
      await page.getByTestId('station-reach').locator('[data-code]').getAttribute('data-code'),
      'token_rejected',
    );
    await screenshot(page, 'scout-first-page-failed');
  });

  test('Back up now on the failed job, after a new token is saved, uploads it', async () => {
    await saveStationSettings(scoutAdmin, station.url, await mintStationToken(stationAdmin), SCOUT_ID);
    await rows().first().getByRole('button', { name: 'Back up mail now' }).click();
    await waitIdle(scoutAdmin);
    await page.getByTestId('verdict').filter({ hasText: 'All 2 jobs backed up.' }).waitFor();
    const mail = backups().locator('tr[data-job="mail"]');
    await mail.getByText('uploaded', { exact: true }).waitFor();
    assert.equal(await mail.getByTestId('error-code').count(), 0);
    assert.equal((await jobState(scoutAdmin, 'mail')).last_status, 'uploaded');
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.getByText('reachable, token accepted').waitFor();
    await screenshot(page, 'scout-first-page');
  });

  test('at phone width the navigation is behind a menu button (Scout and Station)', async () => {
    for (const [server, first, name] of [
      [scout, 'Status', 'scout'],
      [station, 'Overview', 'station'],
    ] as const) {
      const phone = await newPage(ui.browser, { viewport: 'phone' });
      try {
        await signIn(phone.page, server.url, 'admin', ADMIN_PASSWORD);
        await phone.page.getByRole('heading', { name: first, exact: true, level: 1 }).waitFor();
        const nav = phone.page.getByRole('navigation', { name: 'Main' });
        const menu = nav.getByRole('button', { name: 'Menu' });
        const settings = nav.getByRole('link', { name: 'Settings', exact: true });
        assert.equal(await menu.getAttribute('aria-expanded'), 'false');
        assert.equal(await settings.isVisible(), false, 'the links are folded away');
        assert.equal(
          await phone.page.getByRole('button', { name: 'Sign out', exact: true }).isVisible(),
          false,
        );
        const width = Number(await phone.page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(width <= 390, `no sideways scrolling (${width}px)`);
        await screenshot(phone.page, `${name}-first-page-phone`);
        await menu.click();
        assert.equal(await menu.getAttribute('aria-expanded'), 'true');
        await settings.waitFor();
        await screenshot(phone.page, `${name}-menu-open-phone`);
        await settings.click();
        await phone.page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
        assert.equal(await settings.isVisible(), false, 'going somewhere folds the menu again');
      } finally {
        await phone.context.close();
      }
    }
    // The desktop width shows the links and no menu button.
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('button', { name: 'Menu' }).isVisible(), false);
    assert.ok(await nav.getByRole('link', { name: 'Settings', exact: true }).isVisible());
  });

  test('one Settings page per app holds its own settings and the shared ones', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: /settings/i }).count(), 1);
    await nav.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('region', { name: 'Station and schedule' }).waitFor();
    await page
      .getByRole('region', { name: /Notifications/ })
      .first()
      .waitFor();
    const dashboard = await newPage(ui.browser);
    try {
      await signIn(dashboard.page, station.url, 'admin', ADMIN_PASSWORD);
      const stationNav = dashboard.page.getByRole('navigation', { name: 'Main' });
      await stationNav.getByRole('link', { name: 'Settings', exact: true }).waitFor();
      assert.equal(await stationNav.getByRole('link', { name: /settings/i }).count(), 1);
      await stationNav.getByRole('link', { name: 'Settings', exact: true }).click();
      await dashboard.page.getByRole('region', { name: 'Retention' }).waitFor();
      await dashboard.page
        .getByRole('region', { name: /Notifications/ })
        .first()
        .waitFor();
      await dashboard.page.getByRole('link', { name: 'Overview' }).click();
      await dashboard.page.getByRole('article', { name: 'Job docs' }).waitFor();
      await screenshot(dashboard.page, 'station-first-page');
    } finally {
      await dashboard.context.close();
    }
  });
});
