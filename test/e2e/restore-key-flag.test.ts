// `backupd scout restore --key` works but warns that the key shows in `ps` and in shell
// history, and points to --key-file; --key-file says nothing of the kind.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runBackupd } from '../helpers/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'backupd-key-flag-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// 32 bytes of key as unpadded base64url; the archive is not an age file, so the restore fails
// after the key has been read, without a Station.
const KEY = Buffer.alloc(32, 7).toString('base64url');
const archive = join(dir, 'not-age.tar.zst');
writeFileSync(archive, 'not an age file');
const restore = (...args: string[]) =>
  runBackupd([
    'scout',
    'restore',
    '--job',
    'docs',
    '--dest',
    join(dir, 'out'),
    '--archive',
    archive,
    ...args,
  ]);

test('--key warns on stderr that the key shows in ps, and names --key-file', async () => {
  const run = await restore('--key', KEY);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /warning: --key shows the key to every user of this host \(ps/);
  assert.match(run.stderr, /--key-file/);
});

test('--key-file gives no such warning', async () => {
  const keyFile = join(dir, 'key.txt');
  writeFileSync(keyFile, `${KEY}\n`);
  const run = await restore('--key-file', keyFile);
  assert.notEqual(run.code, 0);
  assert.doesNotMatch(run.stderr, /warning: --key/);
});

test('--help says to prefer --key-file over --key', async () => {
  const help = await runBackupd(['scout', 'restore', '--help']);
  assert.match(
    help.stdout.replace(/\s+/g, ' '),
    /--key <key_base64>.*other users see it in ps: prefer --key-file/,
  );
});
