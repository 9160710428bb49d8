// The restore's decryption and zstd on a thread of their own (src/scout/restore/decode-thread.ts):
// the same bytes and the same errors as the stages on the restore's own thread, whatever the
// frames, the input's pieces and the reader's pace.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { zstdCompressSync } from 'node:zlib';
import { AgeError } from '../../src/scout/archive/age.ts';
import { generateScoutKey, type ScoutKey } from '../../src/scout/archive/x25519.ts';
import { createDecodeThread, decodeThreadWorks } from '../../src/scout/restore/decode-thread.ts';
import { pooledFileStream } from '../../src/scout/restore/pooled-file.ts';
import { readSnapshotTar, ZstdError } from '../../src/scout/restore/snapshot-stream.ts';
import { sealFile } from '../helpers/age-seal.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const MiB = 1024 * 1024;
let dir = '';
let key: ScoutKey;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'decode-thread-'));
  key = generateScoutKey();
});
after(() => rm(dir, { recursive: true, force: true }));

/** `plain` sealed by the Scout's own sealer (age, 64 KiB chunks), read back whole. */
async function sealedBytes(name: string, plain: Buffer): Promise<Buffer> {
  const path = join(dir, name);
  const pieces = [];
  for (let at = 0; at < plain.length; at += MiB) pieces.push(plain.subarray(at, at + MiB));
  await sealFile(key.publicKey, pieces.length > 0 ? pieces : [Buffer.alloc(0)], path);
  return readFile(path);
}

/** zstd frames of `size` bytes of `data` each, one after another (a valid zstd stream). */
function framed(data: Buffer, size: number): Buffer {
  const frames: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) frames.push(zstdCompressSync(data.subarray(at, at + size)));
  return Buffer.concat(frames);
}

/** `bytes` in pieces of `size`. */
function pieces(bytes: Buffer, size: number): Readable {
  return Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
      bytes.subarray(i * size, (i + 1) * size),
    ),
  );
}

/** What the thread gives for `sealed` (in pieces of `size`), read `slowly` or not; the blocks' largest size too. */
async function decoded(
  sealed: Buffer,
  size: number,
  slowly = false,
): Promise<{ plain: Buffer; largest: number }> {
  const decode = pieces(sealed, size).pipe(createDecodeThread([key]));
  const got: Buffer[] = [];
  let largest = 0;
  for await (const block of decode) {
    got.push(Buffer.from(block as Buffer));
    largest = Math.max(largest, (block as Buffer).length);
    if (slowly) await sleep(1);
  }
  return { plain: Buffer.concat(got), largest };
}

describe('the decoding thread', () => {
  test('this Node has the zstd call it needs', () => {
    assert.equal(decodeThreadWorks(), true);
  });

  test('frames ending anywhere inside a chunk, in any input pieces, come out unchanged', async () => {
    const data = Buffer.concat([randomBytes(700_000), Buffer.from('text '.repeat(300_000)), randomBytes(5)]);
    // Frames of 1,000 bytes: hundreds end inside each 64 KiB chunk (nodejs/node#64741's case).
    const sealed = await sealedBytes('small-frames.age', framed(data, 1000));
    for (const size of [7, 4093, 65_552, MiB]) {
      const { plain } = await decoded(sealed, size);
      assert.ok(plain.equals(data), `pieces of ${size}`);
    }
  });

  test('64 MiB of zeros from a few KiB come out in blocks of at most 1 MiB to a slow reader', async () => {
    const data = Buffer.alloc(64 * MiB);
    const sealed = await sealedBytes('zeros.age', framed(data, 8 * MiB));
    assert.ok(sealed.length < MiB);
    const { plain, largest } = await decoded(sealed, MiB, true);
    assert.equal(plain.length, data.length);
    assert.ok(plain.equals(data));
    assert.ok(largest <= MiB, `a block of ${largest} bytes`);
  });

  test('a payload of exactly whole chunks and an empty zstd stream end right', async () => {
    const whole = randomBytes(2 * 64 * 1024);
    const sealed = await sealedBytes('whole-chunks.age', framed(whole, MiB));
    assert.ok((await decoded(sealed, MiB)).plain.equals(whole));
  });

  test('damage is refused with the errors of the restore thread: age for the payload, zstd for a cut or foreign stream', async () => {
    const zstd = framed(randomBytes(3 * MiB), MiB);
    const good = await sealedBytes('good.age', zstd);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 100_000] = (flipped[flipped.length - 100_000] as number) ^ 1;
    const lastChunk = (zstd.length % (64 * 1024) || 64 * 1024) + 16;
    const cases: [string, Buffer, RegExp][] = [
      ['a flipped bit', flipped, /^decryption failed/],
      ['cut inside a chunk', good.subarray(0, good.length - 70_000), /^decryption failed/],
      ['the final chunk cut off', good.subarray(0, good.length - lastChunk), /final chunk is missing/],
      ['data after the final chunk', Buffer.concat([good, Buffer.alloc(20)]), /./],
      ['zstd cut short', await sealedBytes('cut.age', zstd.subarray(0, zstd.length - 10)), /^zstd: /],
      ['not zstd', await sealedBytes('not-zstd.age', Buffer.from('not a zstd frame at all')), /^zstd: /],
    ];
    for (const [what, sealed, words] of cases) {
      const errors: unknown[] = [];
      for (const onThread of [true, false]) {
        errors.push(
          await readSnapshotTar({ source: pieces(sealed, MiB), keys: [key], onThread }, async (tar) => {
            for await (const _ of tar);
          }).then(
            () => null,
            (error: unknown) => error,
          ),
        );
      }
      const [thread, here] = errors as (Error | null)[];
      assert.ok(thread && here, `${what}: refused both ways (${thread}, ${here})`);
      assert.equal(thread.constructor, here.constructor, what);
      assert.ok(thread instanceof AgeError || thread instanceof ZstdError, `${what}: ${thread}`);
      assert.equal(thread.message, here.message, what);
      assert.match(thread.message, words, what);
    }
  });

  test('a reader that fails once the whole snapshot was read in ends every stage (both ways), not waits for ever', async () => {
    // 64 MiB of tar from a few KiB: the source ends at once, the stages after it hold back.
    const sealed = await sealedBytes('read-in.age', framed(Buffer.alloc(64 * MiB), 8 * MiB));
    for (const onThread of [true, false]) {
      const source = pieces(sealed, MiB);
      const sourceEnded = once(source, 'end');
      const failure = new Error('the disk is full');
      const outcome = await Promise.race([
        // As the tar reader reads (its own iterator, never returned): one block, then a failure.
        readSnapshotTar({ source, keys: [key], onThread }, async (tar) => {
          await tar[Symbol.asyncIterator]().next();
          await sourceEnded;
          throw failure;
        }).then(
          () => 'read to the end',
          (error: unknown) => error,
        ),
        // A guard, not a measurement: before the fix this never settled.
        sleep(20_000, 'still waiting after 20 s'),
      ]);
      assert.equal(outcome, failure, `onThread ${onThread}`);
    }
  });

  test('an armored snapshot read from a file in pooled blocks comes out unchanged (both ways)', {
    skip: skipUnlessPrograms(['age']),
  }, async () => {
    const data = randomBytes(3 * MiB + 777);
    const path = join(dir, 'armored.age');
    // age's own armor (64 columns a line): lines run across the file's 1 MiB pooled blocks.
    execFileSync('age', ['-a', '-r', key.ageRecipient, '-o', path], { input: framed(data, MiB) });
    for (const onThread of [true, false]) {
      const got: Buffer[] = [];
      await readSnapshotTar({ source: pooledFileStream(path), keys: [key], onThread }, async (tar) => {
        for await (const block of tar) got.push(Buffer.from(block as Buffer));
      });
      assert.ok(Buffer.concat(got).equals(data), `onThread ${onThread}`);
    }
  });

  test('a reader that stops early stops the thread, and the snapshot on the restore thread reads the same', async () => {
    const data = randomBytes(6 * MiB);
    const sealed = await sealedBytes('stop.age', framed(data, MiB));
    const stop = new Error('enough');
    await assert.rejects(
      readSnapshotTar({ source: pieces(sealed, MiB), keys: [key] }, async (tar) => {
        for await (const _ of tar) throw stop;
      }),
      (error: unknown) => error === stop,
    );
    for (const onThread of [true, false]) {
      const got: Buffer[] = [];
      await readSnapshotTar({ source: pieces(sealed, 100_000), keys: [key], onThread }, async (tar) => {
        for await (const block of tar) got.push(Buffer.from(block as Buffer));
      });
      assert.ok(Buffer.concat(got).equals(data), `onThread ${onThread}`);
    }
  });
});
