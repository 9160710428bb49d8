// An interrupted restore (the process killed mid-way) leaves every file either old or new,
// never truncated or mixed: files are written to a temporary name and renamed into place.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { walkJob } from '../../src/scout/jobs/walk.ts';
import { ROOT } from '../helpers/server.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-interrupt-'));
after(() => rmSync(work, { recursive: true, force: true }));

const FILES = 120;
const SIZE = 512 * 1024;

test('a restore killed half-way leaves every file old or new', async () => {
  const source = join(work, 'source');
  const dest = join(work, 'dest');
  mkdirSync(source);
  mkdirSync(dest);
  const fresh = new Map<string, Buffer>();
  const old = new Map<string, Buffer>();
  for (let i = 0; i < FILES; i += 1) {
    const name = `f${String(i).padStart(3, '0')}.bin`;
    fresh.set(name, randomBytes(SIZE));
    old.set(name, Buffer.alloc(SIZE + 7, i));
    writeFileSync(join(source, name), fresh.get(name) as Buffer);
    writeFileSync(join(dest, name), old.get(name) as Buffer);
  }
  const key = generateScoutKey();
  const entries = [];
  for await (const entry of walkJob(source, {
    job_name: 'j',
    include_hidden: true,
    follow_symlinks: false,
    exclude: [],
  })) {
    entries.push(entry);
  }
  const archive = join(work, 'snap.tar.zst');
  await writeArchive({ jobDir: source, entries, recipient: key.publicKey, outPath: archive });

  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'src/main.ts'),
      'scout',
      'restore',
      '--job',
      'j',
      '--dest',
      dest,
      '--archive',
      archive,
      '--key',
      key.keyBase64,
    ],
    { stdio: 'ignore' },
  );
  // Kill it once some, but not all, files were replaced.
  for (let i = 0; i < 2000; i += 1) {
    const replaced = [...fresh.keys()].filter((n) => {
      try {
        return readFileSync(join(dest, n)).length === SIZE;
      } catch {
        return false;
      }
    }).length;
    if (replaced >= 3 || child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  let oldCount = 0;
  let newCount = 0;
  for (const [name, content] of fresh) {
    const now = readFileSync(join(dest, name));
    if (now.equals(content)) newCount += 1;
    else if (now.equals(old.get(name) as Buffer)) oldCount += 1;
    else assert.fail(`${name} is neither the old nor the new content (${now.length} bytes)`);
  }
  assert.ok(newCount > 0, 'the restore got going before it was killed');
  assert.ok(oldCount > 0, 'the restore was killed before it ended');
  const strays = readdirSync(dest).filter((n) => !fresh.has(n));
  for (const stray of strays)
    assert.match(stray, /^\.backupd-[0-9a-f]{8}$/, 'only temporary names are left over');
});
