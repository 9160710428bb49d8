// What a cycle backs up, on a real Station and a real Scout: an archive staged by an earlier
// cycle goes first, and the job is checked again in the same cycle, so the newest snapshot
// holds what changed since (issue #26, "Back up now means now").
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newestSnapshotEntries } from '../helpers/archives.ts';
import { buildTree } from '../helpers/files.ts';
import type { Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { connectScout, jobState, runNow, snapshotsOf, startScout, startStation } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);

describe('what a cycle backs up', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let stationAdmin: Client;
  let scoutAdmin: Client;
  let scanRoot: string;
  let credential = '';

  before(async () => {
    [{ server: station, admin: stationAdmin }, { server: scout, admin: scoutAdmin, scanRoot }] =
      await Promise.all([
        startStation(),
        startScout({
          fill: (scan) => buildTree(scan, { 'docs/.upload_dir': '', 'docs/a.txt': 'alpha' }),
        }),
      ]);
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
  });

  async function newestEntries(job: string): Promise<string[]> {
    const status = (await scoutAdmin.get('/api/status')).body;
    const key = (await scoutAdmin.get('/api/encryption-key')).body;
    return newestSnapshotEntries({
      stationUrl: station.url,
      credential,
      scout: { ...status, age_identity: key.age_identity },
      job,
    });
  }

  test('a waiting archive is uploaded, then what changed since, in one run-now', async () => {
    // The first attempt has no Station yet: the archive stays staged and says when it was made.
    await runNow(scoutAdmin);
    const waiting = await jobState(scoutAdmin, 'docs');
    assert.equal(waiting.last_status, 'failed');
    assert.equal(waiting.staged, true);
    const stagedAt = (waiting as unknown as { staged_at: string | null }).staged_at;
    assert.ok(stagedAt && !Number.isNaN(Date.parse(stagedAt)), `staged_at is a time: ${stagedAt}`);

    credential = await connectScout(scoutAdmin, stationAdmin, 'change-host');
    writeFileSync(join(scanRoot, 'docs', 'new.bin'), Buffer.alloc(70_000, 7));
    await runNow(scoutAdmin);

    const done = await jobState(scoutAdmin, 'docs');
    assert.equal(done.last_status, 'uploaded', done.last_error ?? undefined);
    assert.equal(done.staged, false);
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2, 'the waiting archive and a new one');
    assert.deepEqual((await newestEntries('docs')).sort(), ['a.txt', 'new.bin']);

    // Nothing changed since: the next run-now makes no third snapshot.
    await runNow(scoutAdmin);
    assert.equal((await jobState(scoutAdmin, 'docs')).last_status, 'unchanged');
    assert.equal((await snapshotsOf(stationAdmin, 'docs')).length, 2);
  });
});
