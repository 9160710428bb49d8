// The restore's tar reader on hostile and awkward input: pax and GNU long-name headers are
// capped (1 MiB) before they are read, sizes must be whole non-negative numbers, and input
// cut into small pieces is buffered linearly. Archives from the real `tar` program read back.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { readTar, type TarEntry, TarError } from '../../src/scout/restore/tar-reader.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { tarFile as file, tarHeader as header, tarPadding as padding } from '../helpers/tar-blocks.ts';

const BLOCK = 512;
const MiB = 1024 * 1024;

const END = Buffer.alloc(2 * BLOCK);

/** One pax record, `"<len> key=value\n"`, with its own length counted. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest);
  while (String(length).length + Buffer.byteLength(rest) !== length) length += 1;
  return `${length}${rest}`;
}

function paxed(records: string, entry: Buffer): Buffer {
  const data = Buffer.from(records);
  return Buffer.concat([header('PaxHeader', 'x', data.length), data, padding(data.length), entry]);
}

/** Reads `archive` in `piece`-byte chunks; each entry with its data (read, or left unread). */
async function read(archive: Buffer | Readable, options: { piece?: number; consume?: boolean } = {}) {
  // Object mode keeps the pieces apart (a byte stream would hand them over merged).
  const input = archive instanceof Readable ? archive : Readable.from(chunks(archive, options.piece ?? 4096));
  const entries: { entry: TarEntry; data: Buffer | null }[] = [];
  await readTar(input, async (entry, data) => {
    if (options.consume === false) {
      entries.push({ entry, data: null });
      return;
    }
    const parts: Buffer[] = [];
    for await (const part of data) parts.push(part);
    entries.push({ entry, data: Buffer.concat(parts) });
  });
  return entries;
}

function* chunks(data: Buffer, piece: number): Generator<Buffer> {
  for (let at = 0; at < data.length; at += piece) yield data.subarray(at, at + piece);
}

/** A stream of `head`, then `tail` bytes of zeros in 64 KiB pieces; counts what was pulled. */
function endless(head: Buffer, tail: number) {
  const counter = { pulled: 0 };
  const stream = Readable.from(
    (function* () {
      counter.pulled += head.length;
      yield head;
      for (let sent = 0; sent < tail; sent += 64 * 1024) {
        counter.pulled += 64 * 1024;
        yield Buffer.alloc(64 * 1024);
      }
    })(),
    { highWaterMark: 1 },
  );
  return { stream, counter };
}

async function refused(archive: Buffer | Readable, pattern: RegExp): Promise<void> {
  await assert.rejects(read(archive), (error: unknown) => {
    assert.ok(error instanceof TarError, `expected a TarError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('tar reader', () => {
  test('reads files, pax paths and sizes, in any chunking', async () => {
    const long = `${'deep/'.repeat(40)}name.txt`;
    const archive = Buffer.concat([
      file('a.txt', Buffer.from('hello')),
      paxed(paxRecord('path', long) + paxRecord('size', '3'), file('x', Buffer.from('abc'))),
      END,
    ]);
    for (const piece of [1, 7, 512, archive.length]) {
      const entries = await read(archive, { piece });
      assert.deepEqual(
        entries.map((e) => [e.entry.path.toString(), e.entry.size, e.data?.toString()]),
        [
          ['a.txt', 5, 'hello'],
          [long, 3, 'abc'],
        ],
      );
    }
  });

  test('a pax header over 1 MiB is refused before it is read', async () => {
    const { stream, counter } = endless(header('PaxHeader', 'x', 2 * MiB), 2 * MiB);
    await refused(stream, /pax or long-name headers of more than 1 MiB/);
    assert.ok(counter.pulled < 512 * 1024, `read ${counter.pulled} bytes of a header it refuses`);
  });

  test('a GNU long name over 1 MiB is refused before it is read', async () => {
    const { stream, counter } = endless(header('././@LongLink', 'L', 2 * MiB), 2 * MiB);
    await refused(stream, /pax or long-name headers of more than 1 MiB/);
    assert.ok(counter.pulled < 512 * 1024, `read ${counter.pulled} bytes of a header it refuses`);
  });

  test('many pax headers for one entry count together against the cap', async () => {
    const records = paxRecord('comment', 'x'.repeat(600 * 1024));
    const archive = paxed(records, paxed(records, Buffer.concat([file('a', Buffer.from('a')), END])));
    await refused(archive, /more than 1 MiB/);
  });

  test('a long name just under the cap is read', async () => {
    const name = `${'n'.repeat(1000 * 1024)}`;
    const archive = Buffer.concat([
      header('././@LongLink', 'L', name.length + 1),
      Buffer.from(`${name}\0`),
      padding(name.length + 1),
      file('short', Buffer.from('x')),
      END,
    ]);
    const entries = await read(archive, { piece: 1024 });
    assert.equal(entries[0]?.entry.path.toString(), name);
  });

  test('negative and non-numeric sizes are refused', async () => {
    const base256Negative = Buffer.alloc(12, 0xff);
    const cases: [string, Buffer][] = [
      ['base-256 negative', Buffer.concat([header('a', '0', base256Negative), END])],
      ['octal with a minus', Buffer.concat([header('a', '0', Buffer.from('-0000000001\0')), END])],
      ['not octal', Buffer.concat([header('a', '0', Buffer.from('0000000009\0\0')), END])],
      ['letters', Buffer.concat([header('a', '0', Buffer.from('12x4\0\0\0\0\0\0\0\0')), END])],
      ['pax size negative', Buffer.concat([paxed(paxRecord('size', '-5'), file('a', Buffer.alloc(0))), END])],
      ['pax size text', Buffer.concat([paxed(paxRecord('size', 'lots'), file('a', Buffer.alloc(0))), END])],
      [
        'pax size fraction',
        Buffer.concat([paxed(paxRecord('size', '1.5'), file('a', Buffer.alloc(0))), END]),
      ],
      ['pax size empty', Buffer.concat([paxed(paxRecord('size', ''), file('a', Buffer.alloc(0))), END])],
    ];
    for (const [what, archive] of cases) {
      await assert.rejects(read(archive), (error: unknown) => {
        assert.ok(error instanceof TarError, `${what}: expected a TarError, got ${String(error)}`);
        assert.match(error.message, /size/, what);
        return true;
      });
    }
  });

  test('a GNU base-256 size is read', async () => {
    const field = Buffer.alloc(12);
    field[0] = 0x80;
    field.writeUInt32BE(5, 8);
    const archive = Buffer.concat([header('a', '0', field), Buffer.from('hello'), padding(5), END]);
    const [only] = await read(archive);
    assert.equal(only?.data?.toString(), 'hello');
  });

  test('a header is checked byte for byte wherever it lies in memory: one changed byte is refused', async () => {
    // A name of high bytes (ÿ: 0xc3 0xbf, large sums in every byte lane) and a
    // size between spaces, as some tar writers pad it.
    const good = header('\u00ff'.repeat(50), '0', Buffer.from(' 5 \0\0\0\0\0\0\0\0\0'));
    const archive = Buffer.concat([good, Buffer.from('hello'), padding(5), END]);
    for (const shift of [0, 1, 2, 3]) {
      // The archive at each offset of 4 in a bigger buffer, whole and in odd pieces.
      const at = (bytes: Buffer) => Buffer.concat([Buffer.alloc(shift), bytes]).subarray(shift);
      for (const piece of [archive.length, 7]) {
        const [only] = await read(at(archive), { piece });
        assert.equal(only?.data?.toString(), 'hello', `shift ${shift}, pieces of ${piece}`);
      }
      for (const offset of [0, 3, 147, 156, 300, 511]) {
        const damaged = Buffer.from(archive);
        damaged[offset] = (damaged[offset] as number) ^ 0x01;
        await assert.rejects(
          read(at(damaged), { piece: archive.length }),
          /checksum mismatch/,
          `byte ${offset}`,
        );
      }
    }
  });

  test('64 MiB in 1 KiB pieces, left unread by the handler, is skipped in linear time', async () => {
    const size = 64 * MiB;
    const piece = Buffer.alloc(1024, 0x61);
    const stream = Readable.from(
      (function* () {
        yield header('big', '0', size);
        for (let sent = 0; sent < size; sent += piece.length) yield piece;
        yield file('after', Buffer.from('next'));
        yield END;
      })(),
    );
    const started = performance.now();
    const entries = await read(stream, { consume: false });
    const ms = performance.now() - started;
    assert.deepEqual(
      entries.map((e) => [e.entry.path.toString(), e.entry.size]),
      [
        ['big', size],
        ['after', 4],
      ],
    );
    // About a second; gluing each piece onto a growing buffer took 100 s here. The bound only
    // catches that (or a hang), with room for a loaded machine.
    assert.ok(ms < 60_000, `took ${Math.round(ms)} ms`);
  });

  const TAR_SKIP = skipUnlessPrograms(['tar']);
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('archives of the tar program read back (pax and GNU long names)', { skip: TAR_SKIP }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tar-reader-'));
    dirs.push(dir);
    const long = `${'x'.repeat(150)}.txt`;
    await writeFile(join(dir, long), 'long name');
    await writeFile(join(dir, 'short.txt'), 'short');
    for (const format of ['posix', 'gnu']) {
      const archive = execFileSync('tar', [`--format=${format}`, '-cf', '-', 'short.txt', long], {
        cwd: dir,
      });
      const entries = await read(archive, { piece: 100 });
      assert.deepEqual(
        entries.map((e) => [e.entry.path.toString(), e.data?.toString()]),
        [
          ['short.txt', 'short'],
          [long, 'long name'],
        ],
        format,
      );
    }
  });

  test('names are bytes: a Latin-1 pax path, link targets and xattr names come back exactly', {
    skip: skipUnlessPrograms(['tar', 'setfattr']),
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tar-reader-'));
    dirs.push(dir);
    const latin1 = Buffer.from('caf\xe9-\xff.txt', 'latin1');
    await writeFile(Buffer.concat([Buffer.from(`${dir}/`), latin1]), 'bytes');
    execFileSync(
      'sh',
      [
        '-c',
        'ln -s "$(printf \'caf\\351-\\377.txt\')" link && setfattr -n "user.a=b%c" -v 0x00ff "$(printf \'caf\\351-\\377.txt\')"',
      ],
      { cwd: dir },
    );
    const archive = execFileSync('tar', ['--format=pax', '--xattrs', '--xattrs-include=*', '-cf', '-', '.'], {
      cwd: dir,
    });
    // GNU tar writes the raw bytes in a pax path record; backupd adds hdrcharset=BINARY. Either way: bytes.
    assert.ok(archive.includes(Buffer.concat([Buffer.from('path=./'), latin1])));
    const entries = await read(archive, { piece: 333 });
    const file = entries.find((e) => e.entry.type === '0')?.entry;
    assert.deepEqual(file?.path, Buffer.concat([Buffer.from('./'), latin1]));
    assert.deepEqual(file?.xattrs, [{ name: Buffer.from('user.a=b%c'), value: Buffer.from([0x00, 0xff]) }]);
    const link = entries.find((e) => e.entry.type === '2')?.entry;
    assert.deepEqual(link?.linkname, latin1);
  });
});
