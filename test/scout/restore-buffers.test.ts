// Restore reuses its buffers (issue #27 item 1): the file read, the decrypted blocks and the
// tar reader's input are a few blocks reused or freed at once, not a fresh buffer per MiB
// left to the garbage collector.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, get, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { zstdCompressSync } from 'node:zlib';
import { collector as gcCollector } from '../../src/core/garbage-collector.ts';
import { createAgeDecrypt } from '../../src/scout/archive/age.ts';
import { generateScoutKey, type ScoutKey } from '../../src/scout/archive/x25519.ts';
import { coalescer } from '../../src/scout/restore/coalescer.ts';
import { consumed, PiecePool } from '../../src/scout/restore/piece-pool.ts';
import { pooledFileStream } from '../../src/scout/restore/pooled-file.ts';
import { readSnapshotTar } from '../../src/scout/restore/snapshot-stream.ts';
import { readTar } from '../../src/scout/restore/tar-reader.ts';
import { getStream } from '../../src/scout/upload/stream-get.ts';
import { sealFile } from '../helpers/age-seal.ts';
import { tarFile } from '../helpers/tar-blocks.ts';

const MiB = 1024 * 1024;
let dir: string;
let key: ScoutKey;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'backupd-restore-buffers-'));
  key = generateScoutKey();
});
after(() => rm(dir, { recursive: true, force: true }));

/** `data` sealed by the Scout's own sealer into a file, in 1 MiB frames. */
async function sealed(name: string, data: Buffer): Promise<string> {
  const path = join(dir, name);
  const frames = [];
  for (let at = 0; at < data.length; at += MiB) frames.push(data.subarray(at, at + MiB));
  await sealFile(key.publicKey, frames, path);
  return path;
}

/** A ustar archive of files with these contents (names f0, f1, …). */
function tarOf(contents: Buffer[]): Buffer {
  return Buffer.concat([...contents.map((content, i) => tarFile(`f${i}`, content)), Buffer.alloc(1024)]);
}

/** A tar handler that keeps each entry's data (copied out of the pieces, which may be freed). */
function collector(got: Buffer[]) {
  return async (_entry: unknown, data: AsyncGenerator<Buffer>) => {
    const pieces: Buffer[] = [];
    for await (const piece of data) pieces.push(piece);
    // Pieces are still whole while the handler runs.
    got.push(Buffer.concat(pieces));
  };
}

function assertSame(got: Buffer[], contents: Buffer[]): void {
  assert.equal(got.length, contents.length);
  for (const [i, content] of got.entries()) assert.ok(content.equals(contents[i] as Buffer), `f${i}`);
}

describe('PiecePool', () => {
  test('a block comes back once its last byte is consumed, slices in order, and is reused', () => {
    const pool = new PiecePool({ size: 1024, keep: 2 });
    const block = pool.take();
    const piece = pool.handOn(block, 600);
    consumed(piece.subarray(0, 200));
    assert.equal(pool.take() === block, false, 'given back before its end was read');
    consumed(piece.subarray(200));
    assert.equal(pool.take(), block, 'reused after its end was read');
    consumed(Buffer.alloc(10));
    assert.equal(pool.allocated, 2);
  });

  test('after close, the free blocks and those coming back are freed at once', () => {
    const pool = new PiecePool({ size: 1024, keep: 2 });
    const free = pool.take();
    const out = pool.take();
    pool.give(free);
    const piece = pool.handOn(out, 1024);
    pool.close();
    assert.equal(free.buffer.byteLength, 0);
    assert.equal(out.buffer.byteLength, 1024, 'still in use downstream');
    consumed(piece);
    assert.equal(out.buffer.byteLength, 0);
  });
});

describe('age decryption into reused blocks', () => {
  test('20 MiB read in pooled 1 MiB pieces decrypt into 2 blocks reused, the bytes unchanged', async () => {
    const data = randomBytes(20 * MiB + 12_345);
    const path = await sealed('big.age', data);
    const output = new PiecePool({ size: MiB, keep: 4 });
    const decrypt = createAgeDecrypt([key], { output });
    const source = pooledFileStream(path);
    source.pipe(decrypt);
    const got: Buffer[] = [];
    for await (const block of decrypt) {
      got.push(Buffer.from(block as Buffer));
      // The next stage is done with it: it goes back to the pool.
      consumed(block as Buffer);
    }
    assert.ok(Buffer.concat(got).equals(data));
    assert.ok(output.allocated >= 1 && output.allocated <= 2, `${output.allocated} output blocks for 21 MiB`);
  });

  test('without a pool each output is its own buffer and stays valid', async () => {
    const data = randomBytes(3 * MiB + 7);
    const path = await sealed('own.age', data);
    const decrypt = createAgeDecrypt([key]);
    Readable.from([await readFile(path)]).pipe(decrypt);
    const got: Buffer[] = [];
    for await (const block of decrypt) got.push(block as Buffer);
    assert.ok(Buffer.concat(got).equals(data));
  });
});

describe('a pooled file read', () => {
  test('gives the file in pieces of the block size, reusing the blocks given back', async () => {
    const data = randomBytes(5 * MiB + 3);
    const path = join(dir, 'plain.bin');
    await writeFile(path, data);
    const memories = new Set<ArrayBufferLike>();
    const got: Buffer[] = [];
    for await (const piece of pooledFileStream(path)) {
      memories.add((piece as Buffer).buffer);
      got.push(Buffer.from(piece as Buffer));
      consumed(piece as Buffer);
    }
    assert.ok(Buffer.concat(got).equals(data));
    assert.deepEqual(
      got.map((piece) => piece.length),
      [MiB, MiB, MiB, MiB, MiB, 3],
    );
    assert.ok(memories.size <= 2, `${memories.size} blocks for 6 reads`);
  });
});

describe('the coalescer', () => {
  test('gives a pooled piece it copied back to its pool, and hands on its own blocks', async () => {
    const source = new PiecePool({ size: 1024, keep: 1 });
    const block = source.take();
    block.fill(7);
    const gathered = new PiecePool({ size: 4096, keep: 1 });
    const out: Buffer[] = [];
    const stage = coalescer(4096, gathered);
    stage.on('data', (piece: Buffer) => out.push(piece));
    stage.end(source.handOn(block, 100));
    await once(stage, 'end');
    assert.equal(source.take(), block, 'the copied piece came back');
    assert.equal(out.length, 1);
    assert.ok((out[0] as Buffer).equals(Buffer.alloc(100, 7)));
    consumed(out[0] as Buffer);
    assert.equal(gathered.allocated, 1);
    assert.equal(gathered.take().length, 4096, 'its block came back');
    assert.equal(gathered.allocated, 1);
  });

  test('with freeCopied, frees a big buffer it copied to its end, and nothing else', async () => {
    const big = Buffer.allocUnsafeSlow(64 * 1024).fill(1);
    const head = big.subarray(0, 1000);
    const tail = big.subarray(1000);
    const small = Buffer.from('abc');
    const out: Buffer[] = [];
    const stage = coalescer(MiB, undefined, { freeCopied: true });
    stage.on('data', (piece: Buffer) => out.push(piece));
    stage.write(head);
    assert.equal(big.buffer.byteLength, 64 * 1024, 'not freed before its end was copied');
    stage.write(tail);
    stage.end(small);
    await once(stage, 'end');
    assert.equal(big.buffer.byteLength, 0);
    assert.equal(small.toString(), 'abc');
    assert.ok(Buffer.concat(out).equals(Buffer.concat([Buffer.alloc(64 * 1024, 1), small])));
  });

  test('a pipe read into pooled blocks (short reads) restores the same bytes', async () => {
    const data = randomBytes(3 * MiB + 11);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = writeFile(fifo, data);
    const got: Buffer[] = [];
    for await (const piece of pooledFileStream(fifo)) {
      got.push(Buffer.from(piece as Buffer));
      consumed(piece as Buffer);
    }
    await writer;
    assert.ok(Buffer.concat(got).equals(data));
  });
});

describe('the tar reader with freeInput', () => {
  test('frees each big input buffer once read, after the entry that read it, and reads every entry right', async () => {
    const contents = [randomBytes(300_000), randomBytes(10), randomBytes(1_500_000), randomBytes(70_000)];
    const archive = tarOf(contents);
    // Own buffers of 256 KiB, as zstd's output comes (small ones may be Node's shared pool).
    const chunks: Buffer[] = [];
    for (let at = 0; at < archive.length; at += 256 * 1024) {
      const chunk = Buffer.allocUnsafeSlow(Math.min(256 * 1024, archive.length - at));
      archive.copy(chunk, 0, at);
      chunks.push(chunk);
    }
    const got: Buffer[] = [];
    await readTar(Readable.from(chunks), collector(got), { freeInput: true });
    assertSame(got, contents);
    const freed = chunks.filter((chunk) => chunk.buffer.byteLength === 0).length;
    assert.ok(freed >= chunks.length - 1, `${freed} of ${chunks.length} input buffers freed`);
  });
  test("a big entry's pieces are not held by the reader until the entry ends: memory stays flat in a file's size", async () => {
    // One file of 48 MiB in own buffers of 1 MiB, made as they are read (the test keeps none).
    const size = 48 * MiB;
    const header = tarFile('big', Buffer.alloc(0)).subarray(0, 512);
    header.write(size.toString(8).padStart(11, '0'), 124, 'latin1');
    let sum = 0;
    for (const [i, byte] of header.entries()) sum += i >= 148 && i < 156 ? 32 : byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    const refs: WeakRef<ArrayBuffer>[] = [];
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from(header);
      for (let i = 0; i < size / MiB; i += 1) {
        const chunk = Buffer.allocUnsafeSlow(MiB).fill(i);
        refs.push(new WeakRef(chunk.buffer as ArrayBuffer));
        yield chunk;
      }
      yield Buffer.alloc(1024);
    }
    const gc = gcCollector('major', 'last-resort');
    assert.ok(gc, "V8's gc is reachable");
    let read = 0;
    let held = -1;
    await readTar(
      Readable.from(source(), { highWaterMark: 1 }),
      async (_entry, data) => {
        for await (const piece of data) {
          read += piece.length;
          if (read === 40 * MiB) {
            // Let the current job end: WeakRefs read in it are kept alive until it does.
            await new Promise((resolve) => setImmediate(resolve));
            gc();
            held = refs.slice(0, 30).filter((ref) => ref.deref() !== undefined).length;
          }
        }
      },
      { freeInput: true },
    );
    assert.equal(read, size);
    assert.equal(held, 0, `${held} of the first 30 MiB read are still held after 40 MiB`);
  });
});

describe('a snapshot restored through the pooled stages', () => {
  test('a tar of 6 MiB in zstd frames comes out unchanged from a file, a download (both ways) and small pieces', async (t) => {
    const contents = [randomBytes(2 * MiB + 5), Buffer.alloc(3 * MiB), randomBytes(900)];
    const archive = tarOf(contents);
    const frames: Buffer[] = [];
    for (let at = 0; at < archive.length; at += MiB)
      frames.push(zstdCompressSync(archive.subarray(at, at + MiB)));
    const path = await sealed('tar.age', Buffer.concat(frames));
    const file = await readFile(path);
    // A download (node:http, as stream-get.ts): its socket reads are freed once gathered.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(file.length) });
      for (let at = 0; at < file.length; at += 100_000) res.write(file.subarray(at, at + 100_000));
      res.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    t.after(() => server.close());
    const download = async () => {
      const [res] = (await once(get(`http://127.0.0.1:${port}/`), 'response')) as [IncomingMessage];
      return res;
    };
    for (const source of [
      download,
      // The Scout's download: read from its socket into 1 MiB blocks (socket-body.ts).
      async () => {
        const answer = await getStream(`http://127.0.0.1:${port}/`, {}, new AbortController().signal);
        assert.ok(answer.body && !(answer.body instanceof IncomingMessage), 'read from its socket');
        return answer.body;
      },
      () => pooledFileStream(path),
      // A download: small pieces, gathered by the coalescer into its pooled blocks.
      () =>
        Readable.from(
          Array.from({ length: Math.ceil(file.length / 16_384) }, (_, i) =>
            file.subarray(i * 16_384, (i + 1) * 16_384),
          ),
        ),
    ]) {
      const got: Buffer[] = [];
      await readSnapshotTar({ source: await source(), keys: [key] }, (tar) =>
        readTar(tar, collector(got), { freeInput: true }),
      );
      assertSame(got, contents);
    }
  });
});
