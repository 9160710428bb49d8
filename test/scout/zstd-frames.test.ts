// Node's zstd decompressor drops the rest of a write once a frame ends inside it with output
// room left (nodejs/node#64741): a snapshot of many frames then failed to restore. The frame
// cutter hands it one frame end per write; these tests show the bug and that the cut stream
// decodes whole, however its input is chunked.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { test } from 'node:test';
import { constants, createZstdDecompress, zstdCompressSync } from 'node:zlib';
import { zstdFrameCutter } from '../../src/scout/restore/zstd-frames.ts';

const text = Buffer.from('backup station scout archive '.repeat(4000));
const noise = randomBytes(300_000);
/** A skippable frame (magic 0x184D2A5?, 4-byte size, data): zstd skips it. */
const skippable = Buffer.concat([Buffer.from([0x53, 0x2a, 0x4d, 0x18, 5, 0, 0, 0]), Buffer.from('hello')]);
const frames = [
  zstdCompressSync(text),
  skippable,
  zstdCompressSync(noise, { params: { [constants.ZSTD_c_checksumFlag]: 1 } }),
  zstdCompressSync(Buffer.alloc(0)),
  zstdCompressSync(Buffer.alloc(200_000, 7)),
];
const stream = Buffer.concat(frames);
const expected = Buffer.concat([text, noise, Buffer.alloc(200_000, 7)]);

function chunks(data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size));
  return out;
}

const decode = (parts: Buffer[], cut: boolean) => {
  const source = Readable.from(parts);
  return buffer((cut ? source.pipe(zstdFrameCutter()) : source).pipe(createZstdDecompress()));
};

test('without the cutter, frames after the first in one write are lost (the Node bug)', async () => {
  const decoded = await decode([stream], false).catch(() => Buffer.alloc(0));
  assert.notDeepEqual(decoded, expected, 'Node decodes concatenated frames now: the cutter can go');
});

test('with the cutter, every frame decodes, in one write, in odd chunks and byte by byte', async () => {
  for (const size of [stream.length, 65_536, 100_003, 4_099]) {
    const decoded = await decode(chunks(stream, size), true);
    assert.equal(decoded.length, expected.length, `chunks of ${size}`);
    assert.ok(decoded.equals(expected), `chunks of ${size}`);
  }
  // Byte by byte, every header straddles writes (a small stream: a write is a stream turn).
  const small = [Buffer.from('small text '.repeat(50)), randomBytes(700)];
  const smallStream = Buffer.concat([
    zstdCompressSync(small[0] as Buffer),
    skippable,
    zstdCompressSync(small[1] as Buffer, { params: { [constants.ZSTD_c_checksumFlag]: 1 } }),
  ]);
  const decoded = await decode(chunks(smallStream, 1), true);
  assert.ok(decoded.equals(Buffer.concat(small)));
});

test('bytes pass through unchanged, and what is not zstd still reaches zstd to be refused', async () => {
  const cut = await buffer(Readable.from(chunks(stream, 777)).pipe(zstdFrameCutter()));
  assert.ok(cut.equals(stream));
  const garbage = Buffer.concat([frames[0] as Buffer, Buffer.from('not a zstd frame at all')]);
  await assert.rejects(decode([garbage], true), /Unknown frame descriptor|frame/i);
});
