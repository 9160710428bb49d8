// The Station dashboard in a real Chromium against a real Station (from the source, serving the
// built web app, so the test can move the Station's clock: the Station decides a job's health):
// the overview tree with per-job health, its 15 s refresh (the page's clock is moved, not
// waited for), unusual and stale snapshots, storage and upload pause, snapshot download,
// delete and restore requests, instance deletion with missing files, Station tokens (mint,
// the secret once with its environment lines, revoke), settings and verification.
// State is made over the API with the upload helpers, as a Scout would. Tests run in order.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DAY_MS } from '../../src/core/clock.ts';
import { newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { sha256 } from '../helpers/hashes.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import type { TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';
import { archiveMeta, initiate, upload } from '../helpers/uploads.ts';

const skip = skipUnlessChromium();
const KEY_FP = 'ab'.repeat(32);
const A = { scout_id: 'host-a', scout_instance_id: 'insta00000000001', job_name: 'documents' };
const B = { scout_id: 'host-b', scout_instance_id: 'instb00000000001', job_name: 'photos' };
const C = { scout_id: 'host-c', scout_instance_id: 'instc00000000001', job_name: 'mail' };

/** Waits until an input shows `value` (filled in once its data has loaded). */
async function waitForValue(input: Locator, value: string): Promise<void> {
  for (let i = 0; i < 1200 && (await input.inputValue()) !== value; i++)
    await input.page().waitForTimeout(50);
  assert.equal(await input.inputValue(), value);
}

describe('Station dashboard', { skip }, () => {
  let ui: Ui;
  let server: TestServer;
  let page: Page;
  let receiver: Receiver;
  let admin: Client;
  /** A shared token every test instance uploads with. */
  let token: string;
  /** Stored names of host-a's snapshots, oldest first. */
  const aNames: string[] = [];
  const cNames: string[] = [];

  /** Stores one snapshot of `size` random bytes; returns the finalize answer. */
  async function store(where: typeof A, size: number, extra: Record<string, string> = {}, with_ = token) {
    const data = randomBytes(size);
    const result = await upload(server.url, with_, data, archiveMeta(data, { ...where, ...extra }));
    assert.equal(result.finalize?.status, 200, JSON.stringify(result.initiate.body));
    return result.finalize.body as { stored_as: string; unusual?: boolean; unusual_reason?: string };
  }

  const job = (name: string) => page.getByRole('article', { name: `Job ${name}` });
  /** Opens a job's snapshot list (the overview shows each job as one row until asked). */
  async function openSnapshots(article: Locator): Promise<void> {
    const toggle = article.getByRole('button', { name: /^Snapshots of / });
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  }
  const refresh = () => page.clock.fastForward(15_000);
  const nav = (label: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label }).click();

  before(async () => {
    [ui, receiver] = await Promise.all([
      // From the source (serving the built web app): the test moves the Station's clock.
      startUi({ station: { entry: 'source' }, scout: false, clock: true, firstSignIn: 'station' }),
      startReceiver(),
    ]);
    ({ station: server, page } = ui);
    admin = await adminClient(server.url);
    const minted = await admin.post('/api/credentials/mint', { shared: true, max_registrations: 10 });
    assert.equal(minted.status, 201, minted.text);
    token = minted.body.credential;
    const aExtra = { encryption_key_fingerprint: KEY_FP, advertised_url: receiver.url };
    for (const size of [1000, 1100]) aNames.push((await store(A, size, aExtra)).stored_as);
    await store(B, 800, { encryption_key_fingerprint: KEY_FP });
    for (const size of [500, 600]) cNames.push((await store(C, size)).stored_as);
  });
  afterEach(async () => {
    // A failed test may leave a dialog open; it would block the next test's clicks.
    for (let i = 0; i < 3 && (await page.locator('dialog[open]').count()) > 0; i++) {
      await page.keyboard.press('Escape');
    }
  });
  after(async () => {
    await ui?.close();
    await receiver?.close();
  });

  test('the overview shows scout → instance → job with count and chart; a new upload appears on the next refresh', async () => {
    await page.getByRole('button', { name: 'Refresh now' }).click();
    const scout = page.getByRole('region', { name: 'Scout host-a' });
    const instance = scout.getByRole('article', { name: `Instance ${A.scout_instance_id}` });
    const documents = instance.getByRole('article', { name: 'Job documents' });
    await documents.waitFor();
    assert.match(await documents.getByTestId('snapshot-count').innerText(), /^2 \(/);
    assert.equal(await documents.getByTestId('job-health').innerText(), 'OK');
    await documents.getByRole('img', { name: /Sizes of the 2 snapshots of documents/ }).waitFor();
    assert.equal(await documents.getByRole('row').count(), 0, 'snapshots are listed on demand');
    await openSnapshots(documents);
    for (const name of aNames) await documents.getByRole('row', { name }).waitFor();
    assert.match(await page.getByTestId('storage-snapshots').innerText(), /^5 \(/);

    // An upload lands; the page shows it only after its 15 s refresh.
    aNames.push(
      (await store(A, 1200, { encryption_key_fingerprint: KEY_FP, advertised_url: receiver.url })).stored_as,
    );
    await page.waitForTimeout(300);
    assert.match(
      await documents.getByTestId('snapshot-count').innerText(),
      /^2 \(/,
      'not before the refresh',
    );
    await refresh();
    await documents.getByRole('row', { name: aNames[2] }).waitFor();
    assert.match(await documents.getByTestId('snapshot-count').innerText(), /^3 \(/);
    await documents.getByRole('img', { name: /Sizes of the 3 snapshots of documents/ }).waitFor();
  });

  test('an unusual snapshot is marked and explained, in the table, the badge and the chart', async () => {
    const stored = await store(A, 4000, { encryption_key_fingerprint: KEY_FP, advertised_url: receiver.url });
    assert.equal(stored.unusual, true);
    aNames.push(stored.stored_as);
    await refresh();
    const documents = job('documents');
    const row = documents.getByRole('row', { name: stored.stored_as });
    await row.waitFor();
    assert.match(
      await row.innerText(),
      /Unusual\s+3\.91 KiB is more than double the previous snapshot \(1\.17 KiB\)/,
    );
    assert.equal(await documents.getByTestId('job-health').innerText(), 'Unusual');
    assert.match((await documents.getByTestId('job-health').getAttribute('title')) ?? '', /more than double/);
    assert.equal(await documents.locator('svg.chart circle.unusual').count(), 1);
    // The older rows are not flagged.
    assert.doesNotMatch(await documents.getByRole('row', { name: aNames[1] }).innerText(), /Unusual/);
    await screenshot(page, 'station-overview');
  });

  test('a snapshot downloads through its link', async () => {
    const link = job('documents').getByRole('link', { name: `Download ${aNames[0]}` });
    const href = await link.getAttribute('href');
    assert.equal(href, `/api/snapshots/host-a/${A.scout_instance_id}/documents/${aNames[0]}`);
    const response = await page.request.get(`${server.url}${href}`);
    assert.equal(response.status(), 200);
    assert.equal((await response.body()).length, 1000);
  });

  test('uploads pause and resume from the storage card', async () => {
    const state = page.getByTestId('uploads-state');
    assert.equal(await state.innerText(), 'Uploads accepted');
    await page.getByRole('button', { name: 'Pause uploads' }).click();
    await page.getByRole('button', { name: 'Resume uploads' }).waitFor();
    assert.equal(await state.innerText(), 'Uploads paused');
    const data = randomBytes(100);
    const refused = await initiate(server.url, token, archiveMeta(data, B));
    assert.equal(refused.status, 503);
    await page.getByRole('button', { name: 'Resume uploads' }).click();
    await page.getByRole('button', { name: 'Pause uploads' }).waitFor();
    assert.equal(await state.innerText(), 'Uploads accepted');
    assert.equal((await initiate(server.url, token, archiveMeta(data, B))).status, 200);
  });

  test('restore requests: to the original instance (Scout notified) and to another one', async () => {
    const name = aNames[1] ?? '';
    await job('documents')
      .getByRole('button', { name: `Request restore of ${name}` })
      .click();
    let dialog = page.getByRole('dialog', { name: 'Request restore' });
    assert.match(await dialog.getByLabel('Target instance').inputValue(), /^$/);
    await dialog.getByRole('button', { name: 'Send request' }).click();
    dialog = page.getByRole('dialog', { name: 'Restore request sent' });
    await dialog.waitFor();
    assert.match(await dialog.getByTestId('restore-notified').innerText(), /was notified/);
    const hint = receiver.messages.find((m) => m.url === '/backup/restore-notifications');
    assert.ok(hint, 'the Scout got the hint');
    const { id } = JSON.parse(hint.body);
    assert.match(
      await dialog.getByTestId('restore-created').innerText(),
      new RegExp(`${id}.*pending on host-a`, 's'),
    );
    await dialog.getByRole('button', { name: 'Done' }).click();

    // Another registered instance: the request shows up in that instance's list.
    await job('documents')
      .getByRole('button', { name: `Request restore of ${name}` })
      .click();
    dialog = page.getByRole('dialog', { name: 'Request restore' });
    await dialog.getByLabel('Target instance').selectOption({ label: `host-b / ${B.scout_instance_id}` });
    await dialog.getByRole('button', { name: 'Send request' }).click();
    dialog = page.getByRole('dialog', { name: 'Restore request sent' });
    assert.match(await dialog.getByTestId('restore-notified').innerText(), /could not be notified/);
    const listed = await fetch(`${server.url}/backup/recovery/host-b/${B.scout_instance_id}/requests`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.json() as Promise<{ requests: { filename: string }[] }>);
    assert.equal(listed.requests.length, 1);
    assert.equal(listed.requests[0]?.filename, name);
    await dialog.getByRole('link', { name: 'See all restore requests' }).click();

    await page.getByRole('heading', { name: 'Restore requests', level: 1 }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: name });
    await rows.first().waitFor();
    assert.equal(await rows.count(), 2);
    assert.match(await rows.filter({ hasText: 'host-b' }).innerText(), /pending/);
    assert.ok(await page.locator(`[data-request-id="${id}"]`).isVisible());
    await screenshot(page, 'station-restores');
  });

  test('deleting a snapshot asks first and says what goes', async () => {
    await nav('Overview');
    const documents = job('documents');
    await openSnapshots(documents);
    const name = aNames[0] ?? '';
    await documents.getByRole('button', { name: `Delete ${name}` }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete snapshot' });
    assert.match(
      await dialog.innerText(),
      new RegExp(`deletes the snapshot ${name}.*job documents on Scout host-a`, 's'),
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(
      (await admin.get(`/api/snapshots/host-a/${A.scout_instance_id}/documents/${name}`)).status,
      200,
    );

    await documents.getByRole('button', { name: `Delete ${name}` }).click();
    dialog = page.getByRole('dialog', { name: 'Delete snapshot' });
    await dialog.getByRole('button', { name: 'Delete snapshot' }).click();
    await documents.getByRole('row', { name }).waitFor({ state: 'detached' });
    assert.equal(
      (await admin.get(`/api/snapshots/host-a/${A.scout_instance_id}/documents/${name}`)).status,
      404,
    );
    assert.match(await documents.getByTestId('snapshot-count').innerText(), /^3 \(/);
  });

  test('protect a snapshot (its delete goes, the lock shows) and give the job its own retention', async () => {
    await nav('Overview');
    const documents = job('documents');
    await openSnapshots(documents);
    const name = aNames[1] ?? '';
    await documents.getByRole('button', { name: `Protect ${name}` }).click();
    const row = documents.getByRole('row', { name });
    await row.getByText('Protected').waitFor();
    assert.equal(await row.getByRole('button', { name: `Delete ${name}` }).count(), 0);
    const path = `/api/snapshots/host-a/${A.scout_instance_id}/documents/${name}`;
    assert.equal((await admin.delete(path)).body.code, 'protected');
    await refresh();
    assert.equal(
      await documents.getByTestId('job-protected').innerText(),
      '1 protected',
      'the job row shows it too',
    );

    await documents.getByText('Retention of this job').click();
    const scope = documents.locator('details.job-retention');
    await scope.getByLabel('Snapshots kept per job and instance').fill('1');
    for (const label of ['Days kept', 'Weeks kept', 'Months kept', 'Years kept'])
      await scope.getByLabel(label).fill('0');
    await scope
      .getByTestId('job-retention-preview')
      .filter({ hasText: /would be deleted at its next upload/ })
      .waitFor();
    await screenshot(page, 'station-job-retention');
    await scope.getByRole('button', { name: 'Save job retention' }).click();
    await scope.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const { jobs } = (await admin.get('/api/retention/jobs')).body;
    assert.deepEqual(jobs.find((j: { job_name: string }) => j.job_name === 'documents')?.overrides, {
      retention_keep_last: 1,
      retention_keep_daily: 0,
      retention_keep_weekly: 0,
      retention_keep_monthly: 0,
      retention_keep_yearly: 0,
    });
    // Back to the Station's policy, unprotected, as the later tests expect.
    assert.equal(
      (await admin.post(`/api/retention/jobs/host-a/${A.scout_instance_id}/documents`, {})).status,
      200,
    );
    assert.equal((await admin.post(`${path}/protect`, { protected: false })).status, 200);
  });

  test('Station tokens: minted once with its environment lines, it works; errors show their detail', async () => {
    await nav('Station tokens');
    await page.getByLabel('Valid for (days)').fill('5000');
    await page.getByRole('button', { name: 'Mint token' }).click();
    const form = page.getByRole('region', { name: 'Mint a Station token' });
    assert.match(await form.getByRole('alert').innerText(), /ttl_days must be from 1 to 3650/);
    await page.getByLabel('Valid for (days)').fill('30');
    await page.getByLabel('Shared by several Scout instances').check();
    await page.getByLabel('Maximum registrations').fill('1');
    await page.getByRole('button', { name: 'Mint token' }).click();
    await form.getByRole('alert').filter({ hasText: 'max_registrations must be from 2 to 10000' }).waitFor();
    await page.getByLabel('Shared by several Scout instances').uncheck();

    await page.getByRole('button', { name: 'Mint token' }).click();
    const secret = (await page.getByTestId('secret').innerText()).trim();
    assert.match(secret, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
    const lines = await page.getByTestId('env-lines').innerText();
    assert.equal(lines.trim(), `STATION_URL=${server.url}\nSCOUT_CREDENTIAL=${secret}`);
    assert.equal(await form.getByRole('alert').count(), 0, 'the old error is gone');
    await page.getByRole('button', { name: 'Copy environment lines' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), lines.trim());
    await screenshot(page, 'station-tokens');

    // The secret works: a Scout instance binds to it and stores a snapshot.
    const hash = sha256(secret);
    const D = { scout_id: 'host-d', scout_instance_id: 'instd00000000001', job_name: 'etc' };
    await store(D, 300, {}, secret);
    await refresh();
    const row = page.locator(`tr[data-token-hash="${hash}"]`);
    await row.getByText('host-d').waitFor();
    assert.match(await row.innerText(), /Normal/);

    // Shown once: gone after a reload, and the list never holds it.
    await page.reload();
    await row.waitFor();
    assert.equal(await page.getByTestId('secret').count(), 0);
    assert.doesNotMatch(await page.content(), new RegExp(secret.replace(/\./g, '\\.')));

    // Revoke by hash, after a confirmation that names the bound instance.
    await row.getByRole('button', { name: /^Revoke token/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke Station token' });
    assert.match(await dialog.innerText(), new RegExp(`${hash}[\\s\\S]*host-d / ${D.scout_instance_id}`));
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: '1 instance affected' }).waitFor();
    assert.equal((await initiate(server.url, secret, archiveMeta(randomBytes(10), D))).status, 401);
  });

  test('Station tokens: revoke by instance', async () => {
    const minted = await admin.post('/api/credentials/mint', {});
    const E = { scout_id: 'host-e', scout_instance_id: 'inste00000000001', job_name: 'srv' };
    await store(E, 200, {}, minted.body.credential);
    await page.getByRole('button', { name: 'Mint token' }).waitFor();
    await refresh();
    const button = page.getByRole('button', { name: `Revoke by instance host-e / ${E.scout_instance_id}` });
    await button.click();
    const dialog = page.getByRole('dialog', { name: "Revoke the instance's token" });
    assert.match(await dialog.innerText(), /instance inste00000000001 of Scout host-e/);
    await dialog.getByRole('button', { name: 'Revoke by instance' }).click();
    await button.waitFor({ state: 'detached' });
    assert.equal(
      (await initiate(server.url, minted.body.credential, archiveMeta(randomBytes(10), E))).status,
      401,
    );
  });

  test('settings save with errors shown; verification shows each failure', async () => {
    await nav('Settings');
    const keep = page.getByLabel('Snapshots kept per job and instance');
    await waitForValue(keep, '30');
    await keep.fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    assert.match(await page.getByRole('alert').innerText(), /retention_keep_last must be at least 1/);
    await keep.fill('12');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'newest 12 snapshots' }).waitFor();
    assert.equal((await admin.get('/api/overview?section=settings')).body.settings.retention_keep_last, 12);
    await page.reload();
    await waitForValue(keep, '12');
    // retention_keep_within_days sits beside it, explained, 0 (off) by default.
    const within = page.getByLabel('Never delete snapshots younger than (days)');
    await waitForValue(within, '0');
    assert.match(
      await page.locator('#retention-keep-within-days-hint').innerText(),
      /whatever the rules above say/,
    );
    await within.fill('-1');
    await page.getByRole('button', { name: 'Save settings' }).click();
    assert.match(
      await page.getByRole('alert').innerText(),
      /retention_keep_within_days must be 0 \(off\) or more/,
    );
    await within.fill('7');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'stored within the last 7 days' }).waitFor();
    const saved = (await admin.get('/api/overview?section=settings')).body.settings;
    assert.equal(saved.retention_keep_last, 12);
    assert.equal(saved.retention_keep_within_days, 7);

    // Each rule explained; the preview follows the fields: keep only the last one, no calendar
    // rules and nothing "younger than", and every job's older snapshots are listed as deleted.
    const text = await page.getByRole('region', { name: 'Retention' }).innerText();
    assert.match(text, /count by the time the Station stored each snapshot/);
    for (const [label, rule] of [
      ['Hours kept', /first snapshot the Station stored in that hour/],
      ['Days kept', /first stored that day, UTC/],
      ['Weeks kept', /Monday to Sunday/],
      ['Months kept', /each of the last this many months/],
      ['Years kept', /each of the last this many years/],
      ['Uploads per job per hour', /refused \(429\)/],
    ] as const) {
      const id = await page.getByLabel(label).getAttribute('id');
      assert.match(await page.locator(`#${id}-hint`).innerText(), rule);
    }
    for (const label of [
      'Days kept',
      'Weeks kept',
      'Months kept',
      'Years kept',
      'Never delete snapshots younger than (days)',
    ])
      await page.getByLabel(label).fill('0');
    await keep.fill('1');
    const preview = page.getByTestId('retention-preview');
    await preview.filter({ hasText: /With this policy, th(is|ese \d+) snapshots?/ }).waitFor();
    const harsh =
      'retention_keep_last=1&retention_keep_daily=0&retention_keep_weekly=0&retention_keep_monthly=0&retention_keep_yearly=0&retention_keep_within_days=0';
    const expected = (await admin.get(`/api/retention/preview?${harsh}`)).body;
    const shown = await preview.innerText();
    assert.match(
      shown,
      expected.delete_count === 1 ? /this snapshot/ : new RegExp(`these ${expected.delete_count} snapshots`),
    );
    for (const j of expected.jobs.filter((x: { deleted: unknown[] }) => x.deleted.length > 0)) {
      assert.ok(shown.includes(`${j.scout_id} / ${j.scout_instance_id} / ${j.job_name}`), j.job_name);
      assert.ok(shown.includes(j.deleted[0].filename), j.deleted[0].filename);
    }
    assert.equal(
      (await admin.get(`/api/retention/preview?${harsh}`)).body.delete_count,
      expected.delete_count,
      'the preview deleted nothing',
    );
    await screenshot(page, 'station-retention');
    await page.reload();
    await waitForValue(keep, '12');

    // Verification: one file changed on disk, one gone.
    const status = page.getByTestId('verify-status');
    assert.equal(await status.innerText(), 'Never run');
    const dir = join(server.dataDir, 'snapshots', C.scout_id, C.scout_instance_id, C.job_name);
    writeFileSync(join(dir, cNames[0] ?? ''), randomBytes(500));
    rmSync(join(dir, cNames[1] ?? ''));
    await page.getByRole('button', { name: 'Run verification' }).click();
    await status.filter({ hasText: 'Problems found' }).waitFor();
    const result = page.getByTestId('verify-result');
    assert.match(await result.getByRole('row', { name: cNames[0] }).innerText(), /checksum_mismatch/);
    assert.match(await result.getByRole('row', { name: cNames[1] }).innerText(), /missing/);
    assert.match(await result.innerText(), /Checked\s+\d+ files/);
    await screenshot(page, 'station-settings');
  });

  test('deleting an instance whose files are missing offers the cleanup', async () => {
    await nav('Overview');
    const instance = page.getByRole('article', { name: `Instance ${C.scout_instance_id}` });
    await instance.getByRole('button', { name: 'Delete instance' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete instance' });
    assert.match(await dialog.innerText(), /2 snapshots \(1\.07 KiB\) of the job mail/);
    await dialog.getByRole('button', { name: 'Delete instance' }).click();
    assert.match(await dialog.getByRole('alert').innerText(), /1 indexed snapshot files .* missing on disk/);
    await dialog.getByRole('button', { name: 'Delete and clean up missing records' }).click();
    await instance.waitFor({ state: 'detached' });
    const overview = await admin.get('/api/overview?section=snapshots');
    assert.equal(
      overview.body.scouts.some((s: { scout_id: string }) => s.scout_id === 'host-c'),
      false,
    );
  });

  test('at phone width in the dark, three days later: jobs are flagged stale', async () => {
    server.advanceClock(3 * DAY_MS);
    const phone = await newPage(ui.browser, { viewport: 'phone', colorScheme: 'dark' });
    await phone.page.clock.install({ time: Date.now() + 3 * DAY_MS });
    await signIn(phone.page, server.url, 'admin', ADMIN_PASSWORD);
    const documents: Locator = phone.page.getByRole('article', { name: 'Job documents' });
    await documents.waitFor();
    assert.equal(await documents.getByTestId('job-health').innerText(), 'Stale');
    assert.match(
      (await documents.getByTestId('job-health').getAttribute('title')) ?? '',
      /more than 2 days ago/,
    );
    const width = Number(await phone.page.evaluate('document.documentElement.scrollWidth'));
    assert.ok(width <= 390, `no sideways scrolling of the page (${width}px)`);
    await screenshot(phone.page, 'station-overview-phone-dark');
    await phone.context.close();
  });
});
