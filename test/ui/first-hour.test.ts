// A newcomer's first hour, in a real Chromium against a real Scout and Station (the built
// bundle): the first sign-in lands on a Status that asks to save the Scout key (a banner with
// Download until key_saved_at is set); during the very first backup Status never says all is
// well; and every page of both consoles fits a 390 px phone (document.scrollWidth ≤ 390) with
// the tables that overflowed before filled (Station tokens, restore requests, folder contents,
// instance IDs). Screenshots land in test/output/screenshots/first-hour-*.png.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { firstSignIn, newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import {
  backupJob,
  jobState,
  mintStationToken,
  runNow,
  saveStationSettings,
  scoutDataDir,
  scoutStatus,
  waitIdle,
} from '../helpers/scout.ts';
import { freePort, type TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';

const skip = skipUnlessChromium();
const SCOUT_ID = 'first-hour-host-with-a-long-name';
const PHONE = 390;

/** A "Station" that accepts connections and never answers: an upload to it waits. */
async function silentListener(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Waits until nothing on the page is loading. */
async function settled(page: Page): Promise<void> {
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  // (waitForFunction with a string is refused by the pages' Content-Security-Policy.)
  const loading = page.locator('[aria-busy="true"]');
  for (let i = 0; i < 300 && (await loading.count()) > 0; i += 1) await page.waitForTimeout(50);
}

const scrollWidth = async (page: Page) => Number(await page.evaluate('document.documentElement.scrollWidth'));

/** The elements wider than the viewport (for the failure message). */
const overflowing = async (page: Page): Promise<string[]> =>
  page.evaluate(`(() => {
    const found = [];
    for (const el of document.querySelectorAll('body *')) {
      const box = el.getBoundingClientRect();
      if (box.right > ${PHONE} + 0.5 && box.width > 0) {
        const text = (el.textContent || '').trim().slice(0, 40);
        found.push(el.tagName.toLowerCase() + '.' + el.className + ' (' + Math.round(box.right) + 'px) ' + text);
      }
    }
    return found.slice(-8);
  })()`);

describe('the first hour', { skip }, () => {
  let ui: Ui;
  let station: TestServer;
  let scout: TestServer;
  let page: Page;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let silent: Awaited<ReturnType<typeof silentListener>>;

  const banner = () => page.getByTestId('key-banner');
  const verdict = () => page.getByTestId('verdict');

  before(async () => {
    const dirs = scoutDataDir('backupd-first-hour-');
    buildTree(dirs.scanRoot, {
      'docs/.upload_dir': '',
      'docs/a.txt': 'alpha',
      'docs/a-file-with-a-rather-long-name-that-does-not-break-anywhere-at-all.txt': 'long',
      'docs/sub/b.txt': 'bravo',
      'docs/AVeryLongFileNameWithoutAnyPlaceToBreakItAtAllWhichGoesOnAndOn.sqlite': 'db',
    });
    [ui, silent] = await Promise.all([
      startUi({ scout: { dataDir: dirs.dataDir }, page: { viewport: 'phone' } }),
      silentListener(),
    ]);
    ({ station, scout, page } = ui);
    // The Scout's first sign-in happens in the browser (the first test).
    stationAdmin = await adminClient(station.url);
  });

  after(async () => {
    await ui?.close();
    await silent?.close();
  });

  test('the first sign-in lands on Status with the key banner; Download saves the key and ends it', async () => {
    await page.goto(scout.url);
    await page.getByLabel('Username').waitFor();
    await screenshot(page, 'first-hour-sign-in');
    await firstSignIn(page, scout.url);
    scoutAdmin = await adminClient(scout.url);
    await banner().waitFor();
    assert.match(await banner().innerText(), /no\s+snapshot can be restored/);
    assert.equal((await scoutStatus(scoutAdmin)).key_saved_at, null);
    assert.ok((await scrollWidth(page)) <= PHONE, (await overflowing(page)).join('\n'));
    await screenshot(page, 'first-hour-key-banner');

    // The banner stays on every visit until the key is downloaded.
    await page.reload();
    await banner().waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      banner().getByRole('button', { name: 'Download key file' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^backupd-scout-key-/);
    await banner().waitFor({ state: 'detached' });
    assert.match(String((await scoutStatus(scoutAdmin)).key_saved_at), /^\d{4}-/);
    await page.reload();
    await page.getByRole('heading', { name: 'Status', exact: true }).waitFor();
    await settled(page);
    assert.equal(await banner().count(), 0, 'gone for good once saved');
  });

  test('during the very first backup Status does not say all is backed up', async () => {
    await saveStationSettings(scoutAdmin, silent.url, 'not-a-token', SCOUT_ID);
    assert.equal((await scoutAdmin.post('/api/run-now')).body.status, 'queued');
    for (let i = 0; i < 400; i += 1) {
      if ((await jobState(scoutAdmin, 'docs')).last_status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'running');
    await page.reload();
    await verdict().waitFor();
    assert.doesNotMatch(await verdict().innerText(), /backed up\.$/);
    assert.equal(await verdict().getAttribute('class'), 'verdict warn');
    await screenshot(page, 'first-hour-first-backup');
    // Cancelled once its archive is staged (the silent Station holds the upload): a cancel while
    // the archive is still written leaves none, and the next test looks at the one waiting.
    for (let i = 0; i < 400 && !(await jobState(scoutAdmin, 'docs')).staged; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok((await jobState(scoutAdmin, 'docs')).staged, 'the first archive is staged');
    assert.equal((await scoutAdmin.post('/api/cancel-operation')).body.status, 'cancelling');
    await waitIdle(scoutAdmin);
  });

  test('saving Station settings tests the connection; job buttons and words say one thing each', async () => {
    const closed = await freePort();
    await page.goto(`${scout.url}/settings`);
    await page.getByTestId('settings-scan-root').filter({ hasText: '/scan' }).waitFor();
    await page.getByLabel('Station URL').fill(`http://127.0.0.1:${closed}`);
    await page.getByLabel('Station token', { exact: true }).fill('a-token');
    await page.getByRole('button', { name: 'Save Scout settings' }).click();
    const outcome = page.getByTestId('save-outcome');
    await outcome.waitFor();
    assert.match(
      await outcome.innerText(),
      /^Saved, but the Station cannot be reached at this address: .*ECONNREFUSED/,
    );
    assert.equal(await outcome.getAttribute('class'), 'error');
    await screenshot(page, 'first-hour-settings-wrong-port');

    await page.goto(`${scout.url}/`);
    const s = await scoutStatus(scoutAdmin);
    await page.getByTestId('scan-root').filter({ hasText: s.scan_root }).waitFor();
    assert.match(await page.getByTestId('upload-circuit').innerText(), /going ahead normally/);
    assert.match(await page.getByTestId('cron').innerText(), /^0 0 29 2 \* · on 29 February at 00:00$/);

    await page.goto(`${scout.url}/jobs`);
    const card = page.getByRole('article', { name: 'docs' });
    await card.getByRole('button', { name: 'Back up now' }).waitFor();
    assert.equal(await card.getByRole('button', { name: 'Run now' }).count(), 0);
    // The cancelled first backup left its archive waiting: the card says from when.
    assert.match(await card.getByTestId('staged').innerText(), /^An archive from \d\d:\d\d is waiting/);
    assert.equal(await card.getByRole('button', { name: 'Clear staged' }).isDisabled(), false);
    assert.equal(
      await card.getByRole('button', { name: 'Delete job…' }).getAttribute('class'),
      'danger-outline delete-job',
    );
    assert.match(await card.getByTestId('change-detection').innerText(), /names and sizes \(sizes\)/);
  });

  test('every page of both consoles fits 390 px', async () => {
    // Fill what overflowed before: a backup on the Station (instance IDs), a Station token,
    // a restore request waiting on the Scout, folder contents with a long name.
    await saveStationSettings(scoutAdmin, station.url, await mintStationToken(stationAdmin), SCOUT_ID);
    const stored = await backupJob(scoutAdmin, 'docs');
    const s = await scoutStatus(scoutAdmin);
    const ask = await stationAdmin.post(
      `/api/snapshots/${SCOUT_ID}/${s.scout_instance_id}/docs/${encodeURIComponent(stored)}/restore`,
      {},
    );
    assert.equal(ask.status, 201, ask.text);
    await runNow(scoutAdmin);
    await page.goto(`${scout.url}/jobs`);
    const clear = page.getByRole('article', { name: 'docs' }).getByRole('button', { name: 'Clear staged' });
    await clear.waitFor();
    assert.equal(await clear.isDisabled(), true, 'nothing staged: nothing to clear');

    const stationPhone = await newPage(ui.browser, { viewport: 'phone' });
    try {
      await signIn(stationPhone.page, station.url, 'admin', ADMIN_PASSWORD);
      await stationPhone.page.getByRole('navigation', { name: 'Main' }).waitFor();
      for (const [app, server, p, extra] of [
        ['scout', scout, page, ['/jobs/at', '/jobs/at/docs']],
        ['station', station, stationPhone.page, []],
      ] as const) {
        const paths: string[] = await p.evaluate(
          `[...document.querySelectorAll('#main-menu a')].map((a) => new URL(a.href).pathname)`,
        );
        assert.ok(paths.length >= 5, `${app}: the menu lists its pages (${paths.join(', ')})`);
        const problems: string[] = [];
        for (const path of [...paths, ...extra]) {
          await p.goto(`${server.url}${path}`);
          await settled(p);
          const width = await scrollWidth(p);
          if (width > PHONE)
            problems.push(`${app} ${path}: ${width}px\n  ${(await overflowing(p)).join('\n  ')}`);
          await screenshot(p, `first-hour-phone-${app}${path.replaceAll('/', '-')}`);
        }
        assert.deepEqual(problems, []);
      }
    } finally {
      await stationPhone.context.close();
    }
  });
});
