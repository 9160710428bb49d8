/**
 * Uploaded archives leave the staging folder at once and are deleted in the background
 * (src/scout/backup/archive-removal.ts, issue #27); `settled` is what a new archive waits for.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createArchiveRemoval } from '../../src/scout/backup/archive-removal.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'backupd-archive-removal-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('an uploaded archive is out of staging when remove returns, and deleted once settled', async () => {
  const staging = join(dataDir, 'staging');
  mkdirSync(staging, { recursive: true });
  const names = ['docs-1.tar.zst', 'mail-2.tar.zst'];
  for (const name of names) writeFileSync(join(staging, name), Buffer.alloc(4 * 1024 * 1024, 1));
  writeFileSync(join(staging, 'other-3.tar.zst'), 'kept');
  const removal = createArchiveRemoval(dataDir);
  for (const name of names) await removal.remove(join(staging, name));
  assert.deepEqual(readdirSync(staging), ['other-3.tar.zst'], 'only the archive not removed is in staging');
  await removal.settled();
  assert.deepEqual(readdirSync(join(dataDir, 'removing')), [], 'both are deleted');
});

test('removing an archive that is already gone is not an error', async () => {
  const removal = createArchiveRemoval(dataDir);
  await removal.remove(join(dataDir, 'staging', 'never-there.tar.zst'));
  await removal.settled();
});

test('sweep deletes what a kill left in removing/', async () => {
  const removing = join(dataDir, 'removing');
  mkdirSync(removing, { recursive: true });
  writeFileSync(join(removing, 'docs-0.tar.zst'), 'left by a kill');
  await createArchiveRemoval(dataDir).sweep();
  assert.deepEqual(readdirSync(dataDir).includes('removing'), false);
});

test('an archive that cannot be moved out of staging is deleted where it is, before remove returns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'backupd-archive-removal-'));
  try {
    const staging = join(dir, 'staging');
    mkdirSync(staging);
    // A file where the folder should be: it cannot be made, the archive cannot go there.
    writeFileSync(join(dir, 'removing'), 'not a folder');
    writeFileSync(join(staging, 'docs-4.tar.zst'), Buffer.alloc(1024, 1));
    await createArchiveRemoval(dir).remove(join(staging, 'docs-4.tar.zst'));
    assert.deepEqual(readdirSync(staging), [], 'deleted in place');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
