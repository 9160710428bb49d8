// The pages both web apps share (web/common/pages), in a real Chromium against a real
// Station (and a quick pass over a Scout): accounts and the last-admin rule, automation
// tokens (secret shown once, works, revoked), ntfy settings with a test send, hook commands
// and files, trusted CA certificates, the own-account page. State is checked over the API too.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { DAY_MS } from '../../src/core/clock.ts';
import { firstSignIn, newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, Client, userClient } from '../helpers/http.ts';
import { makeCa } from '../helpers/pki.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { freePort, type TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';

const skip = skipUnlessChromium();

/** Goes to a page through the main navigation, as a person would. */
async function openPage(page: Page, label: string, heading: string): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: label, exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The table row that names `name` (an element whose whole text it is). */
const rowOf = (page: Page, name: string) =>
  page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });

interface UserList {
  users: { username: string; is_admin: boolean }[];
}
interface FileList {
  files: { filename: string }[];
}
interface NtfyReply {
  settings: Record<string, string>;
}
interface SessionMe {
  user: { username: string } | null;
  automation_token?: { name: string; scopes: string[] };
}

/** GET over the page's own session cookie (Playwright's request context shares it). */
async function apiGet<T>(page: Page, url: string): Promise<T> {
  const reply = await page.request.get(url);
  assert.equal(reply.status(), 200, `${url}: ${await reply.text()}`);
  return (await reply.json()) as T;
}

/** GET /api/session/me with an automation token: the status and the answer. */
async function meWithToken(baseUrl: string, token: string): Promise<{ status: number; body: SessionMe }> {
  const reply = await fetch(`${baseUrl}/api/session/me`, { headers: { authorization: `Bearer ${token}` } });
  return { status: reply.status, body: (await reply.json()) as SessionMe };
}

describe('pages both apps share, on a Station', { skip }, () => {
  let ui: Ui;
  let station: TestServer;
  let scout: TestServer;
  let receiver: Receiver;
  let page: Page;
  const pkiDir = mkdtempSync(join(tmpdir(), 'backupd-ui-pki-'));

  before(async () => {
    [ui, receiver] = await Promise.all([startUi({ firstSignIn: 'station' }), startReceiver()]);
    ({ station, scout, page } = ui);
  });
  after(async () => {
    await Promise.all([ui?.close(), receiver?.close()]);
    rmSync(pkiDir, { recursive: true, force: true });
  });

  test('accounts: create, edit and delete; the last admin cannot be deleted or demoted', async () => {
    await openPage(page, 'Accounts', 'Accounts');
    await page.getByLabel('Username').fill('operator');
    await page.getByLabel('Initial password').fill('first-password-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: 'Created operator' }).waitFor();
    const row = rowOf(page, 'operator');
    await row.waitFor();
    assert.match(await row.innerText(), /Operator[\s\S]*Must choose a new password at next sign-in/);
    const { users } = await apiGet<UserList>(page, `${station.url}/api/users`);
    assert.deepEqual(
      users.map((u) => [u.username, u.is_admin]),
      [
        ['admin', true],
        ['operator', false],
      ],
    );

    // A too-short password: the server's detail beside the form.
    await page.getByLabel('Username').fill('shorty');
    await page.getByLabel('Initial password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    const createForm = page.getByRole('form', { name: 'Create an account' });
    assert.match(await createForm.getByRole('alert').innerText(), /at least 8 characters/);

    // The only admin: its Delete is disabled and says why (the server refuses it too).
    const deleteAdmin = page.getByRole('button', { name: 'Delete admin' });
    assert.equal(await deleteAdmin.isDisabled(), true);
    assert.match(String(await deleteAdmin.getAttribute('title')), /last admin account cannot be deleted/);
    const dialog = page.getByRole('dialog');
    // Demoting it: the same rule, in the edit dialog.
    await page.getByRole('button', { name: 'Edit admin' }).click();
    await dialog.getByRole('checkbox', { name: /^Admin/ }).uncheck();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    assert.match(
      await dialog.getByRole('alert').innerText(),
      /the last admin account cannot lose admin access/,
    );
    await dialog.getByRole('button', { name: 'Close' }).click();
    assert.equal((await apiGet<UserList>(page, `${station.url}/api/users`)).users.length, 2);

    // Rename the operator and make it an admin.
    await page.getByRole('button', { name: 'Edit operator' }).click();
    await dialog.getByLabel('Username').fill('deputy');
    await dialog.getByRole('checkbox', { name: /^Admin/ }).check();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    await rowOf(page, 'deputy').getByText('Admin', { exact: true }).waitFor();
    await screenshot(page, 'common-accounts');

    const phone = await newPage(ui.browser, { viewport: 'phone', colorScheme: 'dark' });
    await signIn(phone.page, station.url, 'admin', ADMIN_PASSWORD);
    await phone.page.getByRole('navigation', { name: 'Main' }).waitFor();
    await phone.page.goto(`${station.url}/accounts`);
    await rowOf(phone.page, 'deputy').waitFor();
    const width = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
    assert.ok(width <= 390, `the page fits a phone (scroll width ${width})`);
    const table = await phone.page.evaluate<number[]>(
      "[...document.querySelectorAll('.table-wrap')].map((w) => w.scrollWidth - w.clientWidth)",
    );
    assert.deepEqual(table, [0], 'the accounts table needs no sideways scrolling');
    await screenshot(phone.page, 'common-accounts-phone-dark');
    await phone.context.close();

    await page.getByRole('button', { name: 'Delete deputy' }).click();
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    await rowOf(page, 'deputy').waitFor({ state: 'detached' });
    assert.deepEqual(
      (await apiGet<UserList>(page, `${station.url}/api/users`)).users.map((u) => u.username),
      ['admin'],
    );
  });

  test('automation tokens: the secret is shown once and works until revoked', async () => {
    await openPage(page, 'Automation tokens', 'Automation tokens');
    const form = page.getByRole('form', { name: 'Create an automation token' });
    await page.getByLabel('Name').fill('no scopes');
    await page.getByRole('button', { name: 'Create token' }).click();
    assert.match(await form.getByRole('alert').innerText(), /choose at least one scope/);

    await page.getByLabel('Name').fill('ci-check');
    await page.getByRole('checkbox', { name: /^read\b/ }).check();
    await page.getByLabel('Expires after (days)').fill('30');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('secret').innerText()).trim();
    assert.match(secret, /^bkd_at_\S+$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);

    const me = await meWithToken(station.url, secret);
    assert.equal(me.status, 200);
    assert.equal(me.body.user?.username, 'admin');
    assert.equal(me.body.automation_token?.name, 'ci-check');
    assert.deepEqual(me.body.automation_token?.scopes, ['read']);

    const row = rowOf(page, 'ci-check');
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /\bread\b/);
    assert.doesNotMatch(text, /\bmanage\b/);
    assert.match(text, /in 30 d/);
    const expires = await row.locator('time').nth(1).getAttribute('datetime');
    const expected = Date.now() + 30 * DAY_MS;
    assert.ok(Math.abs(new Date(expires ?? 0).getTime() - expected) < 60_000, `expires ${expires}`);
    await screenshot(page, 'common-tokens');

    // Shown once: gone after dismissing, and not there after a reload either.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    assert.equal(await page.getByTestId('secret').count(), 0);
    await page.reload();
    await rowOf(page, 'ci-check').waitFor();
    assert.equal(await page.getByTestId('secret').count(), 0);
    assert.doesNotMatch(await page.content(), new RegExp(secret));

    await rowOf(page, 'ci-check').getByRole('button', { name: 'Revoke ci-check' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /ci-check[\s\S]*stops working at once[\s\S]*401/);
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await rowOf(page, 'ci-check').waitFor({ state: 'detached' });
    const revoked = await fetch(`${station.url}/api/session/me`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(revoked.status, 401);
  });

  test('notifications: saved settings, a test send that arrives and one that cannot', async () => {
    await openPage(page, 'Settings', 'Settings');
    const section = page.getByRole('form', { name: 'Notification settings' });
    await page.getByLabel('ntfy server URL').fill('ftp://example.com');
    await page.getByLabel('Topic').fill('backupd-ui');
    await page.getByRole('button', { name: 'Save notification settings' }).click();
    assert.match(await section.getByRole('alert').innerText(), /ntfy_url must be an http/);

    await page.getByLabel('ntfy server URL').fill(receiver.url);
    await page.getByLabel('Only for sources').fill('upload, verify');
    await page.getByRole('button', { name: 'Save notification settings' }).click();
    await section.getByRole('status').filter({ hasText: 'saved' }).waitFor();
    const { settings } = await apiGet<NtfyReply>(page, `${station.url}/api/ntfy`);
    assert.equal(settings.ntfy_url, receiver.url);
    assert.equal(settings.ntfy_topic, 'backupd-ui');
    assert.equal(settings.ntfy_match_source, 'upload, verify');

    const before = receiver.messages.length;
    await page.getByRole('button', { name: 'Send a test notification' }).click();
    await section.getByRole('status').filter({ hasText: 'Test notification sent' }).waitFor();
    const sent = receiver.messages.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.url, '/backupd-ui');
    assert.match(sent[0]?.body ?? '', /test notification/);

    // Unsaved values are what the test uses: a port nobody listens on.
    const closed = `http://127.0.0.1:${await freePort()}`;
    await page.getByLabel('ntfy server URL').fill(closed);
    await page.getByRole('button', { name: 'Send a test notification' }).click();
    const failure = section.getByRole('alert').filter({ hasText: 'Test notification not sent' });
    assert.match(await failure.innerText(), new RegExp(`could not reach ${closed}`));
    const kept = await apiGet<NtfyReply>(page, `${station.url}/api/ntfy`);
    assert.equal(kept.settings.ntfy_url, receiver.url, 'the test send saved nothing');
  });

  test('hooks: commands saved; a hook file uploaded, viewed and deleted', async () => {
    await page.goto(`${station.url}/settings`);
    await page.getByLabel('Before storing a snapshot (pre_command)').fill('sh ./hello.sh');
    await page.getByRole('button', { name: 'Save hook commands' }).click();
    const commands = page.getByRole('form', { name: 'Hook commands' });
    await commands.getByRole('status').waitFor();
    assert.equal(
      (await apiGet<Record<string, unknown>>(page, `${station.url}/api/hooks`)).pre_command,
      'sh ./hello.sh',
    );

    const upload = page.getByRole('form', { name: 'Upload a hook file' });
    await page.getByLabel('Hook file', { exact: true }).setInputFiles({
      name: '.hidden.sh',
      mimeType: 'text/x-sh',
      buffer: Buffer.from('echo no\n'),
    });
    await page.getByRole('button', { name: 'Upload hook file' }).click();
    assert.match(await upload.getByRole('alert').innerText(), /name must be/);

    const script = '#!/bin/sh\necho "hello from $BACKUPD_EVENT"\n';
    await page.getByLabel('Hook file', { exact: true }).setInputFiles({
      name: 'hello.sh',
      mimeType: 'text/x-sh',
      buffer: Buffer.from(script),
    });
    await page.getByRole('button', { name: 'Upload hook file' }).click();
    await rowOf(page, 'hello.sh').waitFor();
    const { files } = await apiGet<FileList>(page, `${station.url}/api/hooks`);
    assert.deepEqual(
      files.map((f) => f.filename),
      ['hello.sh'],
    );

    await page.getByRole('button', { name: 'View hello.sh' }).click();
    const dialog = page.getByRole('dialog', { name: 'hello.sh' });
    assert.equal((await dialog.locator('pre').innerText()).trimEnd(), script.trimEnd());
    await screenshot(page, 'common-hook-file');
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Delete hello.sh' }).click();
    const confirm = page.getByRole('dialog');
    assert.match(await confirm.innerText(), /hello\.sh[\s\S]*deleted/);
    await confirm.getByRole('button', { name: 'Delete hook file' }).click();
    await rowOf(page, 'hello.sh').waitFor({ state: 'detached' });
    assert.deepEqual((await apiGet<FileList>(page, `${station.url}/api/hooks`)).files, []);
  });

  test('certificates: a PEM CA shows subject, issuer and expiry; anything else the detail', async () => {
    await page.goto(`${station.url}/settings`);
    const upload = page.getByRole('form', { name: 'Upload a CA certificate' });
    await page.getByRole('radio', { name: 'Pasted text' }).check();
    await page.getByLabel('Certificate (PEM)').fill('this is not a certificate');
    await page.getByLabel('Save as').fill('bad.pem');
    await page.getByRole('button', { name: 'Upload certificate' }).click();
    assert.match(await upload.getByRole('alert').innerText(), /certificate_file is not a PEM certificate/);

    const ca = makeCa(pkiDir, 'ui-ca', 'UI Test CA');
    await page.getByRole('radio', { name: 'A file' }).check();
    await page.getByLabel('Certificate file').setInputFiles({
      name: 'ui-ca.pem',
      mimeType: 'application/x-pem-file',
      buffer: Buffer.from(ca.cert),
    });
    await page.getByRole('button', { name: 'Upload certificate' }).click();
    const row = rowOf(page, 'ui-ca.pem');
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    assert.equal(cells[1], 'CN=UI Test CA');
    assert.equal(cells[2], 'CN=UI Test CA');
    assert.match(cells[3] ?? '', /in 30 d/);
    const validTo = new Date(new X509Certificate(ca.cert).validTo).getTime();
    const datetime = await row.locator('time').getAttribute('datetime');
    assert.equal(new Date(datetime ?? 0).getTime(), validTo);
    const listed = await apiGet<{ certificates: FileList['files'] }>(page, `${station.url}/api/certificates`);
    assert.deepEqual(
      listed.certificates.map((c) => c.filename),
      ['ui-ca.pem'],
    );
    await screenshot(page, 'common-settings');

    await page.getByRole('button', { name: 'Delete ui-ca.pem' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /no longer trusted/);
    await dialog.getByRole('button', { name: 'Delete certificate' }).click();
    await row.waitFor({ state: 'detached' });
    assert.deepEqual(
      (await apiGet<{ certificates: FileList['files'] }>(page, `${station.url}/api/certificates`))
        .certificates,
      [],
    );
  });

  test('a non-admin sees only their own account, no tokens, read-only settings; changes own password', async () => {
    const admin = new Client(station.url);
    const ctx = await ui.context.cookies();
    for (const c of ctx) admin.setCookie(c.name, c.value);
    await userClient(admin, 'viewer', 'first-password-1', 'viewer-password-1');

    const viewer = await newPage(ui.browser);
    await signIn(viewer.page, station.url, 'viewer', 'viewer-password-1');
    const nav = viewer.page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Tokens' }).count(), 0);

    await openPage(viewer.page, 'Accounts', 'Accounts');
    await rowOf(viewer.page, 'viewer').waitFor();
    assert.equal(await viewer.page.getByRole('row').count(), 2, 'the header and their own row');
    assert.equal(await viewer.page.getByRole('button', { name: /^Delete/ }).count(), 0);

    await openPage(viewer.page, 'Settings', 'Settings');
    await viewer.page.getByText('Only an admin can change notification settings.').waitFor();
    assert.ok(await viewer.page.getByLabel('Topic').isDisabled());

    await openPage(viewer.page, 'Your account', 'Your account');
    await viewer.page.getByLabel('Current password').fill('viewer-password-1');
    await viewer.page.getByLabel('New password', { exact: true }).fill('viewer-password-2');
    await viewer.page.getByLabel('Confirm new password').fill('viewer-password-2');
    await viewer.page.getByRole('button', { name: 'Change password' }).click();
    await viewer.page.getByRole('status').filter({ hasText: 'Password changed' }).waitFor();
    await screenshot(viewer.page, 'common-account');
    const check = new Client(station.url);
    assert.equal((await check.login('viewer', 'viewer-password-2')).status, 200);
    await viewer.context.close();
  });

  test('on a Scout the same pages use its own hook fields and have no notification filters', async () => {
    const { context: scoutContext, page: scoutPage } = await newPage(ui.browser);
    await firstSignIn(scoutPage, scout.url);
    await openPage(scoutPage, 'Settings', 'Settings');
    await scoutPage.getByLabel('Before each backup job (hook_pre_command)').fill('true');
    await scoutPage.getByRole('button', { name: 'Save hook commands' }).click();
    await scoutPage.getByRole('form', { name: 'Hook commands' }).getByRole('status').waitFor();
    assert.equal(
      (await apiGet<Record<string, unknown>>(scoutPage, `${scout.url}/api/hooks`)).hook_pre_command,
      'true',
    );
    assert.equal(await scoutPage.getByLabel('Only for sources').count(), 0);
    await scoutPage.getByLabel('ntfy server URL').fill(receiver.url);
    await scoutPage.getByLabel('Topic').fill('scout-ui');
    await scoutPage.getByRole('button', { name: 'Save notification settings' }).click();
    await scoutPage.getByRole('status').filter({ hasText: 'Notification settings saved' }).waitFor();
    assert.equal(
      (await apiGet<NtfyReply>(scoutPage, `${scout.url}/api/ntfy`)).settings.ntfy_topic,
      'scout-ui',
    );
    await screenshot(scoutPage, 'common-settings-scout');

    await openPage(scoutPage, 'Automation tokens', 'Automation tokens');
    await scoutPage.getByLabel('Name').fill('scout-read');
    await scoutPage.getByRole('checkbox', { name: /^read\b/ }).check();
    await scoutPage.getByRole('button', { name: 'Create token' }).click();
    const secret = (await scoutPage.getByTestId('secret').innerText()).trim();
    const me = await meWithToken(scout.url, secret);
    assert.equal(me.status, 200);
    assert.equal(me.body.automation_token?.name, 'scout-read');
    await scoutContext.close();
  });
});
