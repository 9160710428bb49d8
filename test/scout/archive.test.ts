// writeArchive on worker threads (tar → zstd frames → age → SHA-256 → staging file): what the
// `age`, `zstd` and `tar` programs read back, what a cancelled archive leaves, and memory that
// stays bounded (a generous bound; speed belongs to bench/scout.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { writeArchive } from '../../src/scout/archive/pipeline.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { type WalkEntry, walkJob } from '../../src/scout/jobs/walk.ts';
import { tree } from '../helpers/files.ts';
import { sha256 } from '../helpers/hashes.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-archive-'));
after(() => rmSync(work, { recursive: true, force: true }));
const key = generateScoutKey();
const MIB = 1024 * 1024;
const CONFIG: JobConfig = { job_name: 'unit', include_hidden: true, follow_symlinks: false, exclude: [] };

async function entriesOf(dir: string): Promise<WalkEntry[]> {
  const entries: WalkEntry[] = [];
  for await (const entry of walkJob(dir, CONFIG)) entries.push(entry);
  return entries;
}

/** Text, incompressible bytes and small files: several zstd frames, some ending mid-chunk of age. */
function source(name: string, megabytes: number): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'small', 'deeper'), { recursive: true });
  const text = Buffer.from('the quick brown fox jumps over the lazy dog\n'.repeat(24_000));
  for (let i = 0; i * 2 < megabytes; i += 1) {
    writeFileSync(join(dir, `text-${i}.txt`), text.subarray(0, MIB + i * 4099));
    writeFileSync(join(dir, `noise-${i}.bin`), randomBytes(MIB - i * 7919));
  }
  for (let i = 0; i < 300; i += 1)
    writeFileSync(join(dir, 'small', 'deeper', `f${i}`), randomBytes(1 + i * 37));
  writeFileSync(join(dir, 'empty'), '');
  return dir;
}

/**
 * Archives `src`, checks the answer's size and SHA-256 against the file and that `age -d | zstd
 * -d | tar -x` reads it back to the same tree; answers the archive's size.
 */
async function assertReadBack(src: string, name: string): Promise<number> {
  const out = join(work, `${name}.tar.zst`);
  const result = await writeArchive({
    jobDir: src,
    entries: await entriesOf(src),
    recipient: key.publicKey,
    outPath: out,
  });
  assert.equal(result.size, statSync(out).size);
  assert.equal(result.sha256, sha256(readFileSync(out)));
  const keyFile = join(work, `${name}-key.txt`);
  writeFileSync(keyFile, `${key.ageIdentity}\n`);
  const dest = join(work, `${name}-out`);
  mkdirSync(dest);
  execFileSync('sh', ['-c', 'age -d -i "$0" "$1" | zstd -d -q | tar -x -C "$2"', keyFile, out, dest]);
  assert.deepEqual(tree(dest), tree(src));
  return result.size;
}

/**
 * Archives `src` into a new staging folder and cancels once `bytes` of the archive are written;
 * asserts the error is the abort and answers what is left in the folder.
 */
async function cancelledAt(src: string, folder: string, bytes: number): Promise<string[]> {
  const staging = join(work, folder);
  mkdirSync(staging);
  const controller = new AbortController();
  await assert.rejects(
    writeArchive({
      jobDir: src,
      entries: await entriesOf(src),
      recipient: key.publicKey,
      outPath: join(staging, 'cancelled.tar.zst'),
      signal: controller.signal,
      onWritten: (written) => {
        if (written > bytes) controller.abort();
      },
    }),
    { name: 'AbortError' },
  );
  return readdirSync(staging);
}

describe('writeArchive', { skip: skipUnlessPrograms(['age', 'zstd', 'tar']) }, () => {
  test('age -d | zstd -d | tar -x reads it back to the same tree; size and SHA-256 match the file', async () => {
    await assertReadBack(source('interop', 12), 'interop');
  });

  test('an archive past the 64 MiB the sealing worker sends to the disk at a time reads back whole', async () => {
    const src = join(work, 'flushed');
    mkdirSync(src);
    // zstd cannot shrink these: the archive passes 64 MiB
    for (let i = 0; i < 80; i += 1) writeFileSync(join(src, `noise-${i}.bin`), randomBytes(MIB));
    assert.ok((await assertReadBack(src, 'flushed')) > 80 * MIB);
  });

  test('cancelled past the first 64 MiB sent to the disk: no archive and no .part is left', async () => {
    // `flushed` is made by the test above.
    assert.deepEqual(await cancelledAt(join(work, 'flushed'), 'staging-flushed', 66 * MIB), []);
  });

  test('cancelled mid-archive: the error is the abort, no archive and no .part is left', async () => {
    assert.deepEqual(await cancelledAt(source('cancel', 24), 'staging', 4 * MIB), []);
  });

  test('cancelled once its last entry is read, while the frames are still sealed: no archive and no .part is left', async () => {
    const src = source('cancel-at-end', 8);
    const staging = join(work, 'staging-at-end');
    mkdirSync(staging);
    const controller = new AbortController();
    const listed = await entriesOf(src);
    // The abort comes once the tar writer has asked for the entry after the last one.
    async function* thenCancel() {
      yield* listed;
      controller.abort();
    }
    await assert.rejects(
      writeArchive({
        jobDir: src,
        entries: thenCancel(),
        recipient: key.publicKey,
        outPath: join(staging, 'cancelled.tar.zst'),
        signal: controller.signal,
        onSealed: () => assert.fail('an aborted archive is not sealed'),
      }),
      { name: 'AbortError' },
    );
    assert.deepEqual(readdirSync(staging), []);
  });

  test('memory stays bounded by the blocks in flight, not the archive size', async () => {
    const src = source('memory', 96);
    const entries = await entriesOf(src);
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    try {
      await writeArchive({
        jobDir: src,
        entries,
        recipient: key.publicKey,
        outPath: join(work, 'memory.tar.zst'),
      });
    } finally {
      clearInterval(timer);
    }
    // Worker threads and their buffers; a buffered 96 MiB archive would be far above this.
    assert.ok(peak - before < 150 * MIB, `RSS grew by ${Math.round((peak - before) / MIB)} MiB`);
  });
});
