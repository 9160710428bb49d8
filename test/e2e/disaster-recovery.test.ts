// The operator's guide, section 7 (disaster recovery), done as it is written. A Scout backs
// up; its key file is downloaded through the Scout console in Chromium (the real download);
// the Scout's data dir and the job folder are deleted; a recovery token is minted in the
// Station's dashboard; the guide's `backupd scout restore` command — read from the guide,
// with this test's addresses, IDs and token put in — run by the single executable with no
// `node` on PATH brings the tree back byte for byte with modes and mtimes; the guide's
// "backupd itself is gone" commands (age | zstd | tar) do the same with the same key file;
// and a rebuilt Scout given the guide's settings continues the old instance's history.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, signIn, skipUnlessChromium } from '../helpers/browser.ts';
import { buildTree, jobTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, adminClient, type Client } from '../helpers/http.ts';
import { IN_CI, skipUnlessPrograms } from '../helpers/programs.ts';
import { backupJob, connectScout, scoutStatus, snapshotsOf } from '../helpers/scout.ts';
import { ROOT, runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const BUILT = join(ROOT, 'dist', 'backupd');
const GUIDE = join(ROOT, 'docs', 'operators-guide.md');
// The guide's example names, used as they are: the job and the lost host's Scout ID.
const JOB = 'photos';
const SCOUT_ID = 'old-host';

const skip =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? 'the single executable is built for linux-x64 only'
    : !existsSync(BUILT) && !IN_CI
      ? 'dist/backupd missing (node scripts/build.ts)'
      : skipUnlessChromium() || skipUnlessPrograms(['age', 'zstd', 'tar']);

// ---------------------------------------------------------------------------------------------
// The guide's commands

/** The text of the `### heading` subsection of the guide, up to the next heading. */
function guideSection(heading: string): string {
  const text = readFileSync(GUIDE, 'utf8');
  const start = text.indexOf(`\n### ${heading}\n`);
  assert.ok(start >= 0, `the guide has a section "${heading}"`);
  const rest = text.slice(start + heading.length + 6);
  const end = rest.search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The fenced code blocks of `text`, indentation removed, continuation lines joined. */
function codeBlocks(text: string): string[][] {
  const blocks: string[][] = [];
  for (const match of text.matchAll(/^( *)```[a-z]*\n([\s\S]*?)^ *```$/gm)) {
    const indent = match[1]?.length ?? 0;
    const joined = (match[2] ?? '')
      .split('\n')
      .map((line) => line.slice(indent))
      .join('\n')
      .replace(/\\\n\s*/g, '');
    blocks.push(joined.split('\n').filter((line) => line.trim() !== ''));
  }
  return blocks;
}

/** The block's lines with the guide's example values replaced; each example must occur in it. */
function fillIn(lines: string[], values: Record<string, string>): string[] {
  for (const example of Object.keys(values))
    assert.ok(
      lines.some((line) => line.includes(example)),
      `the guide's block uses ${example}: ${lines.join(' / ')}`,
    );
  return lines.map((line) => {
    let filled = line;
    for (const [example, value] of Object.entries(values)) filled = filled.split(example).join(value);
    assert.doesNotMatch(filled, /<[^>]*>/, `a placeholder left in: ${filled}`);
    return filled;
  });
}

/** `--flag value` pairs of a command line (flags without a value map to ''). */
function flagsOf(args: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) continue;
    const next = args[i + 1];
    flags.set(arg, next !== undefined && !next.startsWith('--') ? next : '');
  }
  return flags;
}

/** This PATH without the folders that hold a `node` program, and never empty. */
function pathWithoutNode(work: string): string {
  const empty = join(work, 'empty-bin');
  mkdirSync(empty, { recursive: true });
  const kept = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !existsSync(join(dir, 'node')));
  return [...kept, empty].join(delimiter);
}

// ---------------------------------------------------------------------------------------------

describe('operator’s guide section 7: disaster recovery as written', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'backupd-dr-'));
  const oldHost = { dataDir: join(work, 'old-host', 'data'), scanRoot: join(work, 'old-host', 'srv') };
  const newHost = { dataDir: join(work, 'new-host', 'data'), scanRoot: join(work, 'new-host', 'srv') };
  const keyFile = join(work, 'downloads', 'scout-key.txt');
  const noStationEnv = { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: SCOUT_ID, SCOUT_INSTANCE_ID: '' };
  let station: TestServer;
  let stationAdmin: Client;
  let scout: TestServer;
  let rebuilt: TestServer | undefined;
  let browser: Browser;
  let instanceId: string;
  let stored: string;
  let original: ReturnType<typeof jobTree>;
  let recoveryToken: string;
  let dashboardCommand: string;

  before(async () => {
    const folder = join(oldHost.scanRoot, JOB);
    buildTree(folder, {
      '.upload_dir': '',
      'beach/IMG_0001.jpg': Buffer.from(Array.from({ length: 120_000 }, (_, i) => (i * 131 + 7) % 256)),
      'beach/notes.txt': 'sunset at 21:04\n'.repeat(200),
      'beach/empty-album/': null,
      'private/': null,
      'private/passport.pdf': Buffer.from(Array.from({ length: 5_000 }, (_, i) => (i * 17) % 256)),
      'run.sh': '#!/bin/sh\necho hello\n',
      latest: '-> beach/IMG_0001.jpg',
    });
    chmodSync(join(folder, 'run.sh'), 0o750);
    chmodSync(join(folder, 'private', 'passport.pdf'), 0o600);
    chmodSync(join(folder, 'private'), 0o700);
    utimesSync(join(folder, 'beach', 'IMG_0001.jpg'), 1_500_000_000, 1_500_000_000);
    utimesSync(join(folder, 'run.sh'), 1_600_000_000, 1_600_000_000);
    original = jobTree(folder);
    // Each handle is kept as soon as it exists, so `after` stops what started when another failed.
    const started = await Promise.allSettled([
      startServer('station', { entry: 'dist' }).then((server) => {
        station = server;
      }),
      startServer('scout', {
        entry: 'dist',
        dataDir: oldHost.dataDir,
        env: { ...noStationEnv, SCAN_ROOT: oldHost.scanRoot },
      }).then((server) => {
        scout = server;
      }),
      launchBrowser().then((launched) => {
        browser = launched;
      }),
    ]);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    stationAdmin = await adminClient(station.url);
  });

  after(async () => {
    await browser?.close();
    await rebuilt?.dispose();
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  /** A page signed in as admin (the API already made the first sign-in's password change). */
  async function signedIn(url: string): Promise<Page> {
    const { page } = await newPage(browser);
    await signIn(page, url, 'admin', ADMIN_PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return page;
  }

  test('a Scout backs up; its key file is downloaded through the Scout console', async () => {
    const scoutAdmin = await adminClient(scout.url);
    await connectScout(scoutAdmin, stationAdmin, SCOUT_ID);
    stored = await backupJob(scoutAdmin, JOB);
    instanceId = (await scoutStatus(scoutAdmin)).scout_instance_id;

    const console_ = await signedIn(scout.url);
    await console_.getByRole('link', { name: 'Scout key', exact: true }).click();
    const [download] = await Promise.all([
      console_.waitForEvent('download'),
      console_.getByRole('button', { name: 'Download key file' }).click(),
    ]);
    mkdirSync(join(keyFile, '..'), { recursive: true });
    await download.saveAs(keyFile);
    const text = readFileSync(keyFile, 'utf8');
    assert.match(text, /^AGE-SECRET-KEY-1[0-9A-Z]+$/m, 'an age identity line');
    assert.match(text, /^# /m, 'with comment lines, as the console writes it');
  });

  test('the data dir and the job folder are lost; a recovery token is minted in the dashboard', async () => {
    await scout.stop();
    rmSync(oldHost.dataDir, { recursive: true, force: true });
    rmSync(join(oldHost.scanRoot, JOB), { recursive: true, force: true });

    const dashboard = await signedIn(station.url);
    const instance = dashboard.getByRole('article', { name: `Instance ${instanceId}` });
    await instance.getByRole('button', { name: 'Mint a recovery token' }).click();
    const dialog = dashboard.getByRole('dialog', { name: 'Mint a recovery token' });
    await dialog.getByRole('button', { name: 'Mint recovery token' }).click();
    recoveryToken = (await dialog.getByTestId('recovery-token').innerText()).trim();
    dashboardCommand = (await dialog.getByTestId('recovery-command').innerText()).trim();
    assert.match(recoveryToken, /^\S{20,}$/);
    assert.ok(dashboardCommand.includes(recoveryToken), 'the command line carries the token');
  });

  test("the guide's `backupd scout restore` (single executable, no node on PATH) restores the tree", async () => {
    const [restoreBlock] = codeBlocks(guideSection('A host is gone; backupd is still there'));
    assert.equal(restoreBlock?.length, 1, 'one command in the first block');
    const dest = join(newHost.scanRoot, JOB);
    const [line = ''] = fillIn(restoreBlock ?? [], {
      '/srv/photos': dest,
      'https://backup.example.org': station.url,
      '<recovery token>': recoveryToken,
      '<instance ID>': instanceId,
      'scout-key.txt': keyFile,
    });
    const [program, ...args] = line.split(/\s+/);
    assert.equal(program, 'backupd');
    const flags = flagsOf(args);
    assert.equal(flags.get('--job'), JOB);
    assert.equal(flags.get('--scout-id'), SCOUT_ID);

    // The dashboard's command line asks for the same flags with the same values.
    const shown = flagsOf(dashboardCommand.split(/\s+/).slice(1));
    assert.deepEqual([...shown.keys()].sort(), [...flags.keys()].sort(), dashboardCommand);
    for (const flag of ['--station-url', '--token', '--scout-id', '--instance-id'])
      assert.equal(shown.get(flag), flags.get(flag), `${flag} in the dashboard's command`);

    const path = pathWithoutNode(work);
    const noNode = spawnSync('node', ['--version'], { env: { PATH: path } }).error as NodeJS.ErrnoException;
    assert.equal(noNode?.code, 'ENOENT', `no node on ${path}`);
    const result = await runBackupd(args, {
      executable: BUILT,
      cwd: work,
      env: { PATH: path, STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(stored.replace(/\./g, '\\.')));
    // The marker is not part of a snapshot: the guide says to mark the folders again.
    assert.deepEqual(jobTree(dest), original, 'byte-identical, with modes and mtimes');
  });

  test("backupd is gone too: the guide's age | zstd | tar commands give the same tree", async () => {
    const [block] = codeBlocks(guideSection('backupd itself is gone'));
    assert.ok(block && block.length === 3, `three commands: ${block?.join(' / ')}`);
    const [install, ...commands] = block;
    assert.match(install ?? '', /^apt-get install age zstd tar$/, 'installs the tools this test runs');
    const snapshotDir = join(station.dataDir, 'snapshots', SCOUT_ID, instanceId, JOB);
    assert.deepEqual(readdirSync(snapshotDir), [stored], "the guide's layout of the backup root");
    const dest = join(work, 'without-backupd', JOB);
    const filled = fillIn(commands, {
      '/srv/photos': dest,
      'scout-key.txt': keyFile,
      'photos__2026-11-20T03-00-00Z__1a2b3c4d.tar.zst': join(snapshotDir, stored),
    });
    for (const line of filled) {
      const run = spawnSync('bash', ['-o', 'pipefail', '-c', line], { cwd: work, encoding: 'utf8' });
      assert.equal(run.status, 0, `${line}\n${run.stderr}`);
    }
    assert.deepEqual(jobTree(dest), original);
  });

  test("a rebuilt Scout with the guide's settings continues the old instance's history", async () => {
    const settingsBlock = codeBlocks(guideSection('A host is gone; backupd is still there'))[1] ?? [];
    const env: Record<string, string> = { STATION_URL: station.url, SCAN_ROOT: newHost.scanRoot };
    const values = { '<instance ID>': instanceId, '<recovery token>': recoveryToken };
    for (const line of fillIn(settingsBlock, values)) {
      const [name, ...value] = line.split('=');
      env[name ?? ''] = value.join('=');
    }
    assert.deepEqual(Object.keys(env).sort(), [
      'SCAN_ROOT',
      'SCOUT_CREDENTIAL',
      'SCOUT_ID',
      'SCOUT_INSTANCE_ID',
      'STATION_URL',
    ]);
    rebuilt = await startServer('scout', { executable: BUILT, dataDir: newHost.dataDir, env });
    const scoutAdmin = await adminClient(rebuilt.url);
    const status = await scoutStatus(scoutAdmin);
    assert.equal(status.scout_id, SCOUT_ID);
    assert.equal(status.scout_instance_id, instanceId, 'the fresh data dir took the old instance ID');

    // Mark the folder again (section 3), and a new photo arrives.
    writeFileSync(join(newHost.scanRoot, JOB, '.upload_dir'), '');
    writeFileSync(join(newHost.scanRoot, JOB, 'beach', 'IMG_0002.jpg'), 'taken after the rebuild');
    const next = await backupJob(scoutAdmin, JOB);
    const names = await snapshotsOf(stationAdmin, JOB, SCOUT_ID);
    assert.deepEqual(names.sort(), [stored, next].sort(), 'both snapshots in one history');
    const snapshotDir = join(station.dataDir, 'snapshots', SCOUT_ID, instanceId, JOB);
    assert.ok(statSync(join(snapshotDir, next)).isFile(), 'stored in the same instance');

    // The ID is kept: a later start with another SCOUT_INSTANCE_ID is refused, with one line.
    await rebuilt.stop();
    const other = 'ab'.repeat(16);
    const refused = await runBackupd(['scout', 'serve', '--port', '0', '--instance-id', other], {
      executable: BUILT,
      env: { ...env, DATA_DIR: newHost.dataDir },
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, new RegExp(`already has the instance ID ${instanceId}`));
    const malformed = await runBackupd(['scout', 'serve', '--port', '0'], {
      executable: BUILT,
      env: { ...env, DATA_DIR: newHost.dataDir, SCOUT_INSTANCE_ID: 'not-an-id' },
    });
    assert.equal(malformed.code, 2, malformed.stderr);
    assert.match(malformed.stderr, /SCOUT_INSTANCE_ID must be a Scout instance ID/);
  });
});
