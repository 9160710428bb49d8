// The dashboard's "Mint a recovery token" dialog in a real Chromium against a real Station (the
// built bundle): an error shows its detail; the token is shown once with the exact
// `backupd scout restore` command line; it is bound at once and recovers; the instance's other
// token stays valid unless the dialog's revoke option is checked. Tests run in order.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { firstSignIn, launchBrowser, newPage, screenshot, skipUnlessChromium } from '../helpers/browser.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { archiveMeta, initiate, upload } from '../helpers/uploads.ts';

const skip = skipUnlessChromium();
const R = { scout_id: 'host-r', scout_instance_id: 'instr00000000001', job_name: 'documents' };

describe('Station dashboard: recovery tokens', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Client;
  let context: BrowserContext;
  let page: Page;
  /** The instance's own token, which uploaded its snapshot. */
  let original: string;
  const data = randomBytes(2000);

  const latest = (token: string) =>
    fetch(`${server.url}/backup/recovery/${R.scout_id}/${R.scout_instance_id}/${R.job_name}/latest`, {
      headers: { authorization: `Bearer ${token}` },
    });
  const initiateWith = (token: string) => initiate(server.url, token, archiveMeta(randomBytes(10), R));

  /** Opens the dialog from the instance card. */
  async function openDialog() {
    const instance = page
      .getByRole('region', { name: `Scout ${R.scout_id}` })
      .getByRole('article', { name: `Instance ${R.scout_instance_id}` });
    await instance.getByRole('button', { name: 'Mint a recovery token' }).click();
    return page.getByRole('dialog', { name: 'Mint a recovery token' });
  }

  /** Mints in the open dialog; returns the token and the command line it shows. */
  async function mintIn(dialog: Locator) {
    await dialog.getByRole('button', { name: 'Mint recovery token' }).click();
    const token = (await dialog.getByTestId('recovery-token').innerText()).trim();
    const command = (await dialog.getByTestId('recovery-command').innerText()).trim();
    return { token, command };
  }

  const expectedCommand = (token: string) =>
    `backupd scout restore --station-url ${server.url} --token ${token} --scout-id ${R.scout_id} --instance-id ${R.scout_instance_id} --job <JOB> --dest <DIR> --key-file scout-key.txt`;

  before(async () => {
    [server, browser] = await Promise.all([startServer('station', { entry: 'dist' }), launchBrowser()]);
    ({ context, page } = await newPage(browser));
    await firstSignIn(page, server.url);
    admin = await adminClient(server.url);
    const minted = await admin.post('/api/credentials/mint', {});
    assert.equal(minted.status, 201, minted.text);
    original = minted.body.credential;
    const stored = await upload(server.url, original, data, archiveMeta(data, R));
    assert.equal(stored.finalize?.status, 200, JSON.stringify(stored.initiate.body));
  });
  afterEach(async () => {
    for (let i = 0; i < 3 && (await page.locator('dialog[open]').count()) > 0; i++) {
      await page.keyboard.press('Escape');
    }
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('minted once with the restore command; bound at once; the old token stays valid', async () => {
    await page.getByRole('button', { name: 'Refresh now' }).click();
    const dialog = await openDialog();
    await dialog.getByLabel('Valid for (days)').fill('5000');
    await dialog.getByRole('button', { name: 'Mint recovery token' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'ttl_days must be from 1 to 3650' }).waitFor();
    await dialog.getByLabel('Valid for (days)').fill('30');

    const { token, command } = await mintIn(dialog);
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
    assert.equal(command, expectedCommand(token));
    assert.match(await dialog.innerText(), /other token stays valid until you revoke it/);
    assert.match(await dialog.innerText(), /this instance's jobs: documents/);
    await dialog.getByRole('button', { name: 'Copy command' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), command);
    await screenshot(page, 'station-recovery-token');

    // Bound before any upload of its own: it recovers the instance's snapshot.
    const res = await latest(token);
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(data), 'the recovered bytes');
    assert.equal((await initiateWith(original)).status, 200, 'the old token still uploads');

    // Shown once: closing the dialog forgets it.
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('recovery-token').count(), 0);
  });

  test('with "Revoke the instance\'s other tokens" checked, only the new token works', async () => {
    const before = await admin.get('/api/credentials');
    const bound = before.body.credentials.filter(
      (c: { registrations: unknown[] }) => c.registrations.length > 0,
    );
    assert.equal(bound.length, 2, 'the original and the first recovery token');

    const dialog = await openDialog();
    await dialog.getByLabel("Revoke the instance's other tokens", { exact: false }).check();
    const { token, command } = await mintIn(dialog);
    assert.equal(command, expectedCommand(token));
    assert.match(await dialog.innerText(), /Revoked 2 other tokens/);
    assert.equal((await initiateWith(original)).status, 401, 'the original token is revoked');
    assert.equal((await latest(token)).status, 200);
    assert.equal((await initiateWith(token)).status, 200, 'a recovery token may upload for its instance');
  });
});
