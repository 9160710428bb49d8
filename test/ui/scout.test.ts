// The Scout console in a real Chromium against a real Scout paired with a real Station (both
// the built bundle): status with IDs, key fingerprint and Station reachability; settings
// (the Station token is never shown back; a bad cron shows the server's detail); the jobs
// tree, the marker editor with its config_error, browsing with exclusions and one-click
// exclude; run-now producing a snapshot on the Station while the progress bar moves (the
// page's clock is moved for the 2.5 s refresh, not waited for); preview and restore; the
// Station's restore requests; the Scout key download and rotation. Tests run in order.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ScoutStatus } from '../../src/shared/protocol/scout-status.ts';
import { newPage, screenshot, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import { backupJob, jobState, mintStationToken, scoutDataDir, snapshotsOf } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { startUi, type Ui } from '../helpers/ui-kit.ts';

const skip = skipUnlessChromium();
const SCOUT_ID = 'ui-scout';
/** Big enough that archiving and uploading take a few seconds each. */
const BIG_MIB = 300;

interface Sample {
  phase: string;
  value: number;
  max: number;
}
/** The operation's progress bar as the page shows it now, or null when there is none. */
const READ_PROGRESS = `(() => {
  const bar = document.querySelector('progress[aria-label="Operation progress"]');
  if (!bar) return null;
  return {
    phase: document.querySelector('.op-phase .badge')?.textContent ?? '',
    value: Number(bar.getAttribute('value') ?? -1),
    max: Number(bar.getAttribute('max') ?? -1),
  };
})()`;

describe('Scout console', { skip }, () => {
  let ui: Ui;
  let station: TestServer;
  let scout: TestServer;
  let page: Page;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let scanRoot: string;

  const nav = (label: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true });
  const job = (name: string) => page.getByLabel(name, { exact: true });
  const alert = () => page.getByRole('alert');
  const status = async () => (await scoutAdmin.get<ScoutStatus>('/api/status')).body;

  before(async () => {
    const dirs = scoutDataDir('backupd-scout-ui-');
    scanRoot = dirs.scanRoot;
    buildTree(scanRoot, {
      'docs/.upload_dir': '',
      'docs/a.txt': 'alpha',
      'docs/sub/b.txt': 'bravo',
      'docs/notes.tmp': 'scratch',
      'docs/cache/c.bin': 'cached',
      'photos/p1.jpg': 'jpeg',
      'photos/2024/p2.jpg': 'jpeg 2',
      'big/.upload_dir': '',
    });
    const fd = openSync(join(scanRoot, 'big', 'data.bin'), 'w');
    for (let i = 0; i < BIG_MIB; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    ui = await startUi({ scout: { dataDir: dirs.dataDir }, clock: true, firstSignIn: 'scout' });
    ({ station, scout, page } = ui);
    [scoutAdmin, stationAdmin] = await Promise.all([adminClient(scout.url), adminClient(station.url)]);
  });

  after(async () => {
    await ui?.close();
  });

  test('status shows the Scout ID, instance ID and key fingerprint; the Station is not set up yet', async () => {
    const s = await status();
    await page.getByRole('heading', { name: 'Status', exact: true }).waitFor();
    assert.equal(await page.getByTestId('scout-id').innerText(), s.scout_id);
    assert.equal(await page.getByTestId('instance-id').innerText(), s.scout_instance_id);
    assert.equal(await page.getByTestId('key-fingerprint').innerText(), s.key_fingerprint);
    await page.getByText('Nothing is running.').waitFor();
    await page.getByText('not configured').waitFor();
  });

  test('settings: the Station URL and token are saved, the token shows as set but never its value', async () => {
    const credential = await mintStationToken(stationAdmin);
    await nav('Settings').click();
    await page.getByText('No Station token is saved').waitFor();
    await page.getByLabel('Station URL').fill(station.url);
    await page.getByLabel('Station token', { exact: true }).fill(credential);
    await page.getByLabel('Scout ID').fill(SCOUT_ID);
    await page.getByRole('button', { name: 'Save Scout settings' }).click();
    // Saving tests the connection and says what the Station answered, not just "Saved.".
    await page.getByText('Saved. The Station answered and accepted the token.').waitFor();
    assert.match(
      await page.getByTestId('credential-state').innerText(),
      /A Station token is saved \(not shown\)/,
    );
    assert.equal(await page.getByLabel('Station token', { exact: true }).inputValue(), '');
    assert.ok(!(await page.content()).includes(credential), 'the token is nowhere in the page');
    const saved = (await scoutAdmin.get('/api/settings')).body.settings;
    assert.equal(saved.station_url, station.url);
    assert.equal(saved.scout_credential, credential);
    assert.equal(saved.scout_id, SCOUT_ID);

    // Saving again with the token field empty keeps the token; the schedule moves.
    await page.getByLabel('Backup schedule (cron)').fill('30 1 29 2 *');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/station/check')),
      page.getByRole('button', { name: 'Save Scout settings' }).click(),
    ]);
    await page.getByText('Saved. The Station answered and accepted the token.').waitFor();
    assert.equal(await page.getByTestId('cron-words').innerText(), 'on 29 February at 01:30');
    const after = await status();
    assert.equal(after.settings?.scout_credential, credential);
    assert.equal(after.scheduler.cron_schedule, '30 1 29 2 *');
    const next = await page.evaluate(
      (iso) => new Date(iso).toLocaleString(),
      String(after.scheduler.next_run_at),
    );
    await page.getByTestId('next-run').getByText(next).waitFor();
    await screenshot(page, 'scout-settings');

    // A bad cron expression: the server's detail, next to the form.
    await page.getByLabel('Backup schedule (cron)').fill('every hour');
    await page.getByRole('button', { name: 'Save Scout settings' }).click();
    await alert().waitFor();
    assert.match(await alert().innerText(), /cron_schedule.*is not a valid cron expression/s);
    assert.equal((await status()).scheduler.cron_schedule, '30 1 29 2 *', 'nothing saved');

    // The status page now reaches the Station with the token.
    // The Station answers with the token, which it ties to this Scout at the first upload.
    // The Scout records its own contact with the Station; Check now has it ask again.
    await nav('Status').click();
    await page.getByRole('button', { name: 'Check now' }).click();
    await page.getByText('reachable; token not yet bound').waitFor();
    assert.equal(await page.getByTestId('scout-id').innerText(), SCOUT_ID);
  });

  test('jobs: the tree shows the folders; the marker editor saves and shows a config_error', async () => {
    await nav('Jobs').click();
    await job('docs').waitFor();
    await job('big').waitFor();
    const tree = page.getByRole('region', { name: 'Folders under the scan root' });
    await tree.getByRole('link', { name: 'photos', exact: true }).waitFor();
    await tree.getByRole('button', { name: 'Subfolders of photos' }).click();
    await tree.getByRole('link', { name: '2024', exact: true }).waitFor();
    assert.equal(
      await tree.getByRole('button', { name: 'Subfolders of photos' }).getAttribute('aria-expanded'),
      'true',
    );

    // photos becomes a job under a name docs already has: saved, but not valid.
    await tree.getByRole('link', { name: 'photos', exact: true }).click();
    await page.getByRole('heading', { name: 'photos', exact: true, level: 1 }).waitFor();
    await page.getByLabel('Job name').fill('docs');
    await page.getByRole('button', { name: 'Make this folder a job' }).click();
    const configError = page.getByTestId('config-error');
    await configError.waitFor();
    assert.match(await configError.innerText(), /job name "docs" is already used by docs/);
    assert.ok(existsSync(join(scanRoot, 'photos', '.upload_dir')));
    const listed = (await scoutAdmin.get('/api/directories')).body.directories;
    assert.match(
      listed.find((d: { relative_path: string }) => d.relative_path === 'photos').config_error,
      /already used/,
    );

    // Fixed: the error goes away.
    await page.getByLabel('Job name').fill('pictures');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved. The next cycle uses these settings.').waitFor();
    assert.equal(await configError.count(), 0);
    assert.match(readFileSync(join(scanRoot, 'photos', '.upload_dir'), 'utf8'), /job_name: pictures/);

    // Delete job: says what it keeps, removes the marker, keeps the files.
    await job('pictures').getByRole('button', { name: 'Delete job' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(
      await dialog.innerText(),
      /Kept: every file in the folder, and the snapshots already on the Station/,
    );
    await dialog.getByRole('button', { name: 'Delete job' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Make this folder a job' }).waitFor();
    assert.ok(!existsSync(join(scanRoot, 'photos', '.upload_dir')), 'marker removed');
    assert.ok(existsSync(join(scanRoot, 'photos', 'p1.jpg')), 'files kept');

    await nav('Jobs').click();
    await job('docs').waitFor();
    assert.equal(await job('pictures').count(), 0);
    await screenshot(page, 'scout-jobs');
  });

  test('browse marks excluded entries; the editor and one-click exclude add patterns', async () => {
    await job('docs').getByRole('link', { name: 'docs', exact: true }).click();
    await page.getByRole('heading', { name: 'docs', exact: true, level: 1 }).waitFor();
    const row = (name: string) =>
      page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });
    await row('notes.tmp').getByText('included').waitFor();

    await page.getByLabel('Exclude patterns').fill('*.tmp');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved. The next cycle uses these settings.').waitFor();
    await row('notes.tmp').getByText('excluded').waitFor();
    assert.match(await row('notes.tmp').innerText(), /pattern \*\.tmp/);
    assert.match(await row('a.txt').innerText(), /included/);
    assert.match(await row('.upload_dir').innerText(), /excluded/);

    await row('cache/').getByRole('button', { name: 'Exclude cache' }).click();
    await row('cache/').getByText('excluded').waitFor();
    assert.match(readFileSync(join(scanRoot, 'docs', '.upload_dir'), 'utf8'), /\/cache\//);
    assert.match(await page.getByLabel('Exclude patterns').inputValue(), /^\*\.tmp\n\/cache\/$/);

    await page.getByRole('button', { name: 'Calculate size' }).click();
    const size = (await scoutAdmin.get('/api/directories/size?relative_path=docs')).body;
    assert.match(await page.getByTestId('folder-size').innerText(), new RegExp(`in ${size.files} files`));
    await screenshot(page, 'scout-folder');
  });

  test('run now uploads to the Station; the progress bar moves while it runs', async () => {
    // "Back up all jobs now" on Status (a job card's "Back up now" backs up that job only).
    await nav('Status').click();
    await page.getByRole('button', { name: 'Back up all jobs now' }).click();
    const progress = page.getByRole('progressbar', { name: 'Operation progress' });
    await progress.waitFor();
    const samples: Sample[] = [];
    let shot = false;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const sample = (await page.evaluate(READ_PROGRESS)) as Sample | null;
      if (sample) samples.push(sample);
      else if (await page.getByText('Nothing is running.').isVisible()) break;
      if (samples.length === 3) await nav('Status').click();
      if (!shot && sample && sample.value > 0) {
        await screenshot(page, 'scout-status');
        shot = true;
      }
      // The console refreshes every 2.5 s while work runs: move its clock that far.
      await page.clock.fastForward(2_500);
      await page.waitForTimeout(300);
    }
    await page.getByText('Nothing is running.').waitFor();
    const rising = samples.some((a, i) =>
      samples
        .slice(i + 1)
        .some((b) => b.phase === a.phase && b.max === a.max && a.max > 0 && b.value > a.value),
    );
    assert.ok(rising, `the bar moved within a phase: ${JSON.stringify(samples)}`);
    // The upload streams while the archive is written (docs/protocol.md, streamed upload): what is
    // left for the phase `uploading` after it may be too short to be seen, so only archiving must be.
    assert.ok(
      samples.some((s) => s.phase === 'archiving'),
      `the archiving phase was shown: ${JSON.stringify(samples)}`,
    );
    assert.ok(shot, 'a screenshot while the bar moved');

    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'uploaded');
    assert.equal((await snapshotsOf(stationAdmin, 'docs', SCOUT_ID)).length, 1);
    assert.equal((await snapshotsOf(stationAdmin, 'big', SCOUT_ID)).length, 1);
    await nav('Jobs').click();
    await job('docs').getByText('uploaded', { exact: true }).waitFor();
  });

  test('restore: the preview lists what is added and replaced; restoring brings the files back', async () => {
    rmSync(join(scanRoot, 'docs', 'a.txt'));
    writeFileSync(join(scanRoot, 'docs', 'sub', 'b.txt'), 'BRAVO, edited');
    writeFileSync(join(scanRoot, 'docs', 'local.txt'), 'only here');
    await nav('Restore').click();
    await page.getByLabel('Job', { exact: true }).selectOption('docs');
    assert.ok(await page.getByLabel('The latest').isChecked());
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.waitFor();
    assert.match(
      await page.getByTestId('preview-summary').innerText(),
      /1 file would be added, 1 replaced/,
      await preview.innerText(),
    );
    assert.equal(await preview.getByRole('list', { name: 'Added' }).innerText(), 'a.txt');
    assert.equal(await preview.getByRole('list', { name: 'Replaced' }).innerText(), 'sub/b.txt');
    assert.ok(!existsSync(join(scanRoot, 'docs', 'a.txt')), 'a preview changes nothing');

    await page.getByRole('button', { name: 'Restore…' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /1 existing file is replaced/);
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.getByText(/Restored .*: 1 added, 1 replaced/).waitFor();
    assert.equal(readFileSync(join(scanRoot, 'docs', 'a.txt'), 'utf8'), 'alpha');
    assert.equal(readFileSync(join(scanRoot, 'docs', 'sub', 'b.txt'), 'utf8'), 'bravo');
    assert.equal(readFileSync(join(scanRoot, 'docs', 'local.txt'), 'utf8'), 'only here');
  });

  test('restore: an entry the folder refuses is listed as a problem; the rest is restored', async () => {
    rmSync(join(scanRoot, 'docs', 'a.txt'));
    writeFileSync(join(scanRoot, 'docs', 'sub', 'b.txt'), 'BRAVO, edited again');
    const sub = join(scanRoot, 'docs', 'sub');
    execFileSync('chattr', ['+i', sub]); // immutable: even root cannot replace a file in it
    try {
      await nav('Restore').click();
      await page.getByLabel('Job', { exact: true }).selectOption('docs');
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.getByRole('region', { name: 'Preview' }).waitFor();
      await page.getByRole('button', { name: 'Restore…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Restore', exact: true }).click();
      const problems = page.getByRole('alert').filter({ hasText: 'sub/b.txt' });
      await problems.waitFor();
      assert.match(
        await problems.innerText(),
        /sub\/b\.txt: not restored: operation not permitted \(EPERM\)/,
      );
    } finally {
      execFileSync('chattr', ['-i', sub]);
    }
    assert.equal(readFileSync(join(scanRoot, 'docs', 'a.txt'), 'utf8'), 'alpha');
    assert.equal(readFileSync(join(sub, 'b.txt'), 'utf8'), 'BRAVO, edited again');
  });

  test("restore: the picker lists the job's snapshots on the Station newest first (date, size); the picked one is previewed", async () => {
    writeFileSync(join(scanRoot, 'docs', 'second.txt'), 'only in the second snapshot');
    const second = await backupJob(scoutAdmin, 'docs');
    const [first] = await snapshotsOf(stationAdmin, 'docs', SCOUT_ID);
    assert.ok(first && first !== second, `two snapshots of docs: ${first}, ${second}`);
    rmSync(join(scanRoot, 'docs', 'second.txt'));

    await nav('Status').click();
    await nav('Restore').click();
    await page.getByLabel('Job', { exact: true }).selectOption('docs');
    const picker = page.getByLabel('Snapshot on the Station');
    await picker.locator('option').nth(1).waitFor({ state: 'attached' });
    const options = await picker
      .locator('option')
      .evaluateAll((list) =>
        list.map((o) => ({ value: o.getAttribute('value') ?? '', text: o.textContent ?? '' })),
      );
    assert.deepEqual(
      options.map((o) => o.value),
      [second, first],
      'newest first',
    );
    for (const o of options)
      assert.match(o.text, /\d{4}.*\d{1,2}:\d{2}:\d{2}.* · \d+(\.\d)? (B|KiB) · [0-9a-f]{8}$/);
    await screenshot(page, 'scout-restore-picker');

    // The older snapshot (without second.txt) is previewed, not the latest.
    await picker.selectOption(first);
    assert.ok(await page.getByLabel('This snapshot').isChecked());
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.getByRole('heading', { name: `Preview of ${first}` }).waitFor();
    assert.match(await page.getByTestId('preview-summary').innerText(), /0 files would be added/);
    await page.getByLabel('The latest').check();
    await page.getByRole('button', { name: 'Preview' }).click();
    await preview.getByRole('heading', { name: `Preview of ${second}` }).waitFor();
    assert.equal(await preview.getByRole('list', { name: 'Added' }).innerText(), 'second.txt');
  });

  test('restore: the preview separates added, replaced and unchanged; a chosen folder restores into another folder only', async () => {
    writeFileSync(join(scanRoot, 'docs', 'sub', 'b.txt'), 'BRAVO, once more');
    await nav('Status').click();
    await nav('Restore').click();
    await page.getByLabel('Job', { exact: true }).selectOption('docs');
    await page.getByLabel('The latest').check();
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.waitFor();
    assert.equal(await preview.getByRole('list', { name: 'Replaced' }).innerText(), 'sub/b.txt');
    const unchanged = await preview.getByRole('list', { name: 'Unchanged' }).innerText();
    assert.match(unchanged, /^a\.txt$/m, 'the identical a.txt is unchanged, not replaced');

    const elsewhere = join(tmpdir(), `backupd-ui-restore-${randomBytes(4).toString('hex')}`);
    try {
      const picker = page.getByRole('list', { name: 'Files in the snapshot' });
      await picker.getByLabel('sub/', { exact: true }).check();
      assert.ok(
        await picker.getByLabel('sub/b.txt', { exact: true }).isChecked(),
        'the folder takes its files',
      );
      await page.getByLabel('Restore into another folder').fill(elsewhere);
      await screenshot(page, 'scout-restore-file-picker');
      await page.getByRole('button', { name: 'Preview' }).click();
      await preview.getByRole('list', { name: 'Added' }).getByText('sub/b.txt').waitFor();
      assert.equal(await preview.getByRole('list', { name: 'Added' }).innerText(), 'sub/b.txt');
      // Nothing would be replaced: no confirmation needed.
      await page.getByRole('button', { name: 'Restore…' }).click();
      await page
        .getByText(new RegExp(`Restored .*: 1 added, 0 replaced, 0 unchanged .* into ${elsewhere}`))
        .waitFor();
      assert.deepEqual(readdirSync(elsewhere), ['sub']);
      assert.equal(
        readFileSync(join(elsewhere, 'sub', 'b.txt'), 'utf8'),
        'BRAVO, edited again',
        'as in the latest snapshot',
      );
      assert.equal(readFileSync(join(scanRoot, 'docs', 'sub', 'b.txt'), 'utf8'), 'BRAVO, once more');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('restore requests from the Station: accept into another folder, or reject', async () => {
    const s = await status();
    const file = String((await jobState(scoutAdmin, 'docs')).last_stored_as);
    const ask = () =>
      stationAdmin.post(
        `/api/snapshots/${SCOUT_ID}/${s.scout_instance_id}/docs/${encodeURIComponent(file)}/restore`,
        {},
      );
    const first = await ask();
    assert.equal(first.status, 201, first.text);
    const second = await ask();
    assert.equal(second.status, 201, second.text);

    const requests = page.getByRole('region', { name: 'Restore requests from the Station' });
    await requests.getByRole('button', { name: 'Refresh' }).click();
    await requests.getByRole('button', { name: 'Accept' }).nth(1).waitFor();
    await screenshot(page, 'scout-restore');
    await requests.getByRole('button', { name: 'Accept' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Folder').fill('docs-copy');
    await dialog.getByLabel('Source Scout key').waitFor();
    await dialog.getByRole('button', { name: 'Accept and restore' }).click();
    await requests.getByText(/Restored .* into docs-copy: \d+ added/).waitFor();
    assert.equal(readFileSync(join(scanRoot, 'docs-copy', 'a.txt'), 'utf8'), 'alpha');

    await requests.getByRole('button', { name: 'Reject' }).click();
    await requests.getByText('Rejected the request').waitFor();
    const listed: { id: string; status: string }[] = (await scoutAdmin.get('/api/restore-requests')).body;
    const mine = listed.filter((r) => r.id === first.body.request.id || r.id === second.body.request.id);
    assert.deepEqual(mine.map((r) => r.status).sort(), ['completed', 'rejected']);
    assert.equal(await requests.getByRole('button', { name: 'Accept' }).count(), 0);
  });

  test('Scout key: fingerprint, reveal, download as an age identity; rotation', async () => {
    const key = (await scoutAdmin.get('/api/encryption-key')).body;
    await nav('Scout key').click();
    await page.getByTestId('key-fingerprint').filter({ hasText: key.fingerprint }).waitFor();
    await page.getByText('Keep a copy of this key somewhere other than this host.').waitFor();
    await screenshot(page, 'scout-key');

    await page.getByRole('button', { name: 'Reveal key' }).click();
    assert.equal(await page.getByTestId('scout-key').innerText(), key.key_base64);
    await page.getByRole('button', { name: 'Hide key' }).click();
    assert.equal(await page.getByTestId('scout-key').count(), 0);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download key file' }).click(),
    ]);
    const saved = await download.path();
    const text = readFileSync(saved, 'utf8');
    assert.ok(text.startsWith('AGE-SECRET-KEY-1'), text.slice(0, 20));
    assert.match(
      download.suggestedFilename(),
      new RegExp(`^backupd-scout-key-${SCOUT_ID}-${key.fingerprint.slice(0, 8)}`),
    );
    // age itself reads the file as an identity of this Scout's key.
    assert.equal(execFileSync('age-keygen', ['-y', saved], { encoding: 'utf8' }).trim(), key.age_recipient);

    await page.getByRole('button', { name: 'Rotate key…' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /still need the old key/);
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByText('Rotated. The new fingerprint is').waitFor();
    const rotated = (await scoutAdmin.get('/api/encryption-key')).body.fingerprint;
    assert.notEqual(rotated, key.fingerprint);
    assert.equal(await page.getByTestId('key-fingerprint').innerText(), rotated);
  });

  test('on a phone in dark mode the pages fit 390 px', async () => {
    const phone = await newPage(ui.browser, { viewport: 'phone', colorScheme: 'dark' });
    const overflow = async () => Number(await phone.page.evaluate('document.documentElement.scrollWidth'));
    try {
      await signIn(phone.page, scout.url, 'admin', ADMIN_PASSWORD);
      await phone.page.getByTestId('scout-id').waitFor();
      await phone.page.getByText('reachable, token accepted').waitFor();
      assert.ok((await overflow()) <= 390, `no sideways scrolling (${await overflow()} px)`);
      await screenshot(phone.page, 'scout-status-phone-dark');
      for (const [path, ready] of [
        ['/jobs/at/docs', 'Contents'],
        ['/restore', 'Restore requests from the Station'],
      ] as const) {
        await phone.page.goto(`${scout.url}${path}`);
        await phone.page.getByRole('heading', { name: ready }).waitFor();
        await phone.page.getByRole('table').first().waitFor();
        assert.ok((await overflow()) <= 390, `${path}: no sideways scrolling (${await overflow()} px)`);
      }
      await screenshot(phone.page, 'scout-restore-phone-dark');
    } finally {
      await phone.context.close();
    }
  });
});
