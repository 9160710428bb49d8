import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { coalescer } from '../../src/scout/restore/coalescer.ts';

/** The pieces `input` comes out of a coalescer of `size` as (each write the next stage gets). */
async function pieces(input: Buffer[], size: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const next = new Writable({
    write(piece: Buffer, _encoding, done) {
      out.push(piece);
      done();
    },
  });
  await pipeline(Readable.from(input, { objectMode: false }), coalescer(size), next);
  return out;
}

test('a download in small pieces reaches decryption in pieces of the coalescing size, bytes unchanged', async () => {
  const data = randomBytes(10_000);
  const small = Array.from({ length: 100 }, (_, i) => data.subarray(i * 100, (i + 1) * 100));
  const out = await pieces(small, 4096);
  assert.deepEqual(
    out.map((piece) => piece.length),
    [4096, 4096, 1808],
  );
  assert.deepEqual(Buffer.concat(out), data);
});

test('pieces of the coalescing size or more pass through as they are (a file read in 1 MiB pieces)', async () => {
  const big = [randomBytes(5000), randomBytes(4096)];
  const out = await pieces(big, 4096);
  assert.equal(out[0], big[0], 'not copied');
  assert.equal(out[1], big[1], 'not copied');
});

test('a small piece then big ones: the gathered bytes go first, in order', async () => {
  const input = [randomBytes(10), randomBytes(5000), randomBytes(3)];
  const out = await pieces(input, 4096);
  assert.deepEqual(Buffer.concat(out), Buffer.concat(input));
  assert.ok(out.every((piece, i) => i === out.length - 1 || piece.length === 4096));
});
