// A skipped file is never silent (issue #24 item 4), on a real Scout and Station: what a
// snapshot left out is in the job's state (`last_skipped`), in /metrics and in the job's
// notification, and the snapshot is still stored.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newestSnapshotEntries, withNewestSnapshot } from '../helpers/archives.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { sampleValue, scrape } from '../helpers/metrics.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { type Receiver, settle, startReceiver } from '../helpers/receiver.ts';
import { connectScout, jobState, runNow, startScout, startStation } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

describe('what a snapshot leaves out is reported', {
  skip: skipUnlessPrograms(['age', 'zstd', 'tar', 'getfattr']),
}, () => {
  let station: TestServer;
  let scout: TestServer;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let inbox: Receiver;
  let credential = '';

  before(async () => {
    inbox = await startReceiver();
    [{ server: station, admin: stationAdmin }, { server: scout, admin: scoutAdmin }] = await Promise.all([
      startStation(),
      startScout({
        fill: (scan) => {
          buildTree(scan, { 'docs/.upload_dir': '', 'docs/a.txt': 'alpha' });
          writeFileSync(Buffer.from(`${scan}/docs/caf\xe9.txt`, 'latin1'), 'Latin-1 name');
          execFileSync('setfattr', ['-n', 'user.x', '-v', 'kept', join(scan, 'docs', 'a.txt')]);
          execFileSync('mkfifo', [join(scan, 'docs', 'fifo')]);
          execFileSync('python3', [
            '-c',
            `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(scan, 'docs', 'sock'))})`,
          ]);
        },
      }),
    ]);
    credential = await connectScout(scoutAdmin, stationAdmin, 'skip-host');
    expectStatus(
      await scoutAdmin.post('/api/ntfy', { ntfy_url: inbox.url, ntfy_topic: 'scout-events' }),
      200,
    );
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    await inbox?.close();
  });

  test('last_skipped in the job state and /metrics, a notification that says incomplete; the snapshot is stored', async () => {
    const from = inbox.messages.length;
    await runNow(scoutAdmin);
    const state = (await jobState(scoutAdmin, 'docs')) as Awaited<ReturnType<typeof jobState>> & {
      last_skipped: { count: number; paths: string[] } | null;
    };
    assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
    assert.deepEqual(state.last_skipped, { count: 2, paths: ['fifo', 'sock'] });

    const metrics = await scrape(scoutAdmin);
    assert.equal(sampleValue(metrics, 'backupd_job_skipped_entries', { job_name: 'docs' }), 2);

    const got = (await settle(inbox, from)).filter((m) => m.headers.title === 'Backup of docs is incomplete');
    assert.equal(got.length, 1, JSON.stringify(inbox.messages.map((m) => m.headers.title)));
    assert.match(got[0]?.body ?? '', /2 entries were left out \(fifo, sock\)/);

    const status = (await scoutAdmin.get('/api/status')).body;
    const key = (await scoutAdmin.get('/api/encryption-key')).body;
    const newest = {
      stationUrl: station.url,
      credential,
      scout: { ...status, age_identity: key.age_identity },
      job: 'docs',
    };
    const entries = await newestSnapshotEntries(newest);
    assert.deepEqual(entries.sort(), ['a.txt', 'caf\\351.txt'], 'tar -t shows the byte 0xE9 as \\351');

    const xattr = await withNewestSnapshot(
      newest,
      "mkdir out && age -d -i key.txt snap.tar.zst | zstd -d | tar --xattrs --xattrs-include='*' -x -C out && getfattr --only-values -n user.x out/a.txt",
    );
    assert.equal(xattr, 'kept', 'the Scout archives extended attributes');

    // Nothing changed: unchanged, and the report still describes the stored snapshot.
    await runNow(scoutAdmin);
    const again = (await jobState(scoutAdmin, 'docs')) as typeof state;
    assert.equal(again.last_status, 'unchanged');
    assert.deepEqual(again.last_skipped, { count: 2, paths: ['fifo', 'sock'] });
  });
});
