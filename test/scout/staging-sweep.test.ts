/**
 * The Scout's start-up sweep of its staging folder (src/scout/state/staging-sweep.ts): what a kill
 * left there (a `.part`, an archive finished but never recorded, an uploaded archive whose
 * deletion was cut short in `removing/`) goes; the archive a job state holds as staged stays for
 * the next cycle. A real Scout process starts on a prepared data dir.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openScoutStorage } from '../../src/scout/db/open.ts';
import { createJobStates } from '../../src/scout/state/job-states.ts';
import { scoutDataDir } from '../helpers/scout.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const { dataDir } = scoutDataDir('backupd-staging-sweep-');
let scout: TestServer | undefined;
after(async () => {
  await scout?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('start-up removes staging leftovers no job holds, and uploaded archives not yet deleted; keeps the staged archive a job holds', async () => {
  const staging = join(dataDir, 'staging');
  mkdirSync(staging, { recursive: true });
  const held = 'docs-2026-11-26T06-00-00.000Z-0a0b0c0d.tar.zst';
  const storage = await openScoutStorage(dataDir);
  try {
    await createJobStates(storage.scoutDb).update('docs', 'docs', {
      staged: {
        file: join(staging, held),
        size: 3,
        sha256: 'a'.repeat(64),
        fingerprint: 'f',
        timestamp: '2026-11-26T06:00:00.000Z',
        idempotency_key: 'k',
        key_fingerprint: 'age1x',
      },
    });
  } finally {
    await storage.close();
  }
  for (const name of [held, 'docs-2026-11-26T07-00-00.000Z-01020304.tar.zst.part', 'mail-orphan.tar.zst'])
    writeFileSync(join(staging, name), 'abc');
  const removing = join(dataDir, 'removing');
  mkdirSync(removing);
  writeFileSync(join(removing, 'docs-2026-11-26T05-00-00.000Z-05060708.tar.zst'), 'abc');

  scout = await startServer('scout', { dataDir });
  assert.deepEqual(readdirSync(staging), [held], 'only the archive a job state holds is left');
  assert.equal(existsSync(removing), false, 'the uploaded archive a kill left undeleted is gone');
});
