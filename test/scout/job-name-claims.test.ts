// Issue #23 item 4 on a real Scout and Station: a local user puts a marker claiming the admin's
// job name "payroll" into a folder anyone can write to. Before, both claimants were disabled
// and "payroll" stopped being backed up; now the established job (it has run as "payroll")
// keeps running, and only the newcomer gets a config_error and one notification.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { type Receiver, settle, startReceiver } from '../helpers/receiver.ts';
import * as scouts from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

const NOBODY = 65534;
const scanRoot = mkdtempSync(join(tmpdir(), 'backupd-claims-scan-'));
// Other users reach the scan root, as they reach /home or /srv.
chmodSync(scanRoot, 0o755);

let station: TestServer;
let stationAdmin: Client;
let scout: TestServer;
let scoutAdmin: Client;
let inbox: Receiver;

const claimNotes = (from: number) =>
  settle(inbox, from).then((got) => got.filter((m) => String(m.headers.title).includes('claimed twice')));

/** Runs `script` with /bin/sh as user nobody. */
function asNobody(script: string): void {
  const run = spawnSync('sh', ['-c', script], { uid: NOBODY, gid: NOBODY, cwd: scanRoot, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
}

describe('a job name claimed by a local user (issue #23 item 4)', () => {
  before(async () => {
    buildTree(scanRoot, { 'finance/payroll/.upload_dir': '', 'finance/payroll/march.csv': 'net,gross\n' });
    inbox = await startReceiver();
    ({ server: station, admin: stationAdmin } = await scouts.startStation());
    ({ server: scout, admin: scoutAdmin } = await scouts.startScout({ env: { SCAN_ROOT: scanRoot } }));
    await scouts.connectScout(scoutAdmin, stationAdmin, 'claims-host');
    expectStatus(await scoutAdmin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'scout' }), 200);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    await inbox?.close();
    rmSync(scanRoot, { recursive: true, force: true });
  });

  test("the admin's job keeps running; the newcomer is refused and reported once", async () => {
    await scouts.backupJob(scoutAdmin, 'finance/payroll');
    const before = (await scouts.snapshotsOf(stationAdmin, 'payroll')).length;

    // A folder any user can write to, sorting before the admin's in the tree.
    mkdirSync(join(scanRoot, 'aaa-shared'));
    chmodSync(join(scanRoot, 'aaa-shared'), 0o777);
    asNobody("printf 'job_name: payroll\\n' > aaa-shared/.upload_dir; echo mine > aaa-shared/x.txt");
    assert.equal(lstatSync(join(scanRoot, 'aaa-shared', '.upload_dir')).uid, NOBODY);

    const from = inbox.messages.length;
    writeFileSync(join(scanRoot, 'finance/payroll/april.csv'), 'net,gross\n1,2\n');
    const stored = await scouts.backupJob(scoutAdmin, 'finance/payroll');
    assert.equal(
      (await scouts.snapshotsOf(stationAdmin, 'payroll')).length,
      before + 1,
      'payroll is still backed up',
    );
    assert.ok(stored);

    const listed = (await scoutAdmin.get('/api/directories')).body.directories as Array<{
      relative_path: string;
      config: unknown;
      config_error: string | null;
    }>;
    const payroll = listed.find((d) => d.relative_path === 'finance/payroll');
    const shared = listed.find((d) => d.relative_path === 'aaa-shared');
    assert.equal(payroll?.config_error, null);
    assert.equal(shared?.config, null);
    assert.match(String(shared?.config_error), /job name "payroll" is already used by finance\/payroll/);

    const notes = await claimNotes(from);
    assert.equal(notes.length, 1, 'the newcomer is reported once');
    assert.match(notes[0]?.body ?? '', /aaa-shared .*"payroll" of finance\/payroll/);
    assert.equal(notes[0]?.headers.priority, 'high');

    const again = inbox.messages.length;
    await scouts.runNow(scoutAdmin);
    assert.deepEqual(await claimNotes(again), [], 'a conflict already reported is not reported again');
  });
});
