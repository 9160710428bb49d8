/**
 * The Scout bench's dataset, in the shape of issue #14: per GiB, 40 % text, 40 %
 * incompressible bytes, and 20 % in ~24,600 small files of 1–16 KiB spread over 800 folders.
 * Made once per size (a `.complete` marker) and reused; mtimes are fixed so runs compare.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, lutimesSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MIB = 1024 * 1024;
const WORDS =
  'the quick brown fox jumps over a lazy dog backup station scout archive encrypted snapshot restore key folder file report invoice meeting notes holiday photo budget draft final version'.split(
    ' ',
  );

/** A deterministic stream of numbers (xorshift32) so the text is the same on every machine. */
function numbers(seed: number) {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** `bytes` of word text with line breaks, compressing about as well as prose does with zstd -3. */
function text(bytes: number, seed: number): Buffer {
  const next = numbers(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = WORDS[next() % WORDS.length] as string;
    const sep = next() % 12 === 0 ? '\n' : ' ';
    const token = next() % 9 === 0 ? `${word}${next() % 10_000}${sep}` : `${word}${sep}`;
    parts.push(token);
    length += token.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

export function generateDataset(dir: string, gib: number): void {
  if (existsSync(join(dir, '.complete'))) return;
  rmSync(dir, { recursive: true, force: true });
  const total = gib * 1024 * MIB;
  const fixed = new Date('2025-06-01T12:00:00Z');
  mkdirSync(join(dir, 'text'), { recursive: true });
  const textFile = 16 * MIB;
  const textBlock = text(textFile, 7);
  for (let done = 0, n = 0; done < total * 0.4; n += 1) {
    // Rotate one block per file: the same words, never the same bytes at the same offset.
    const shift = (n * 104_729) % textFile;
    const file = Buffer.concat([textBlock.subarray(shift), textBlock.subarray(0, shift)]);
    writeFileSync(join(dir, 'text', `doc-${n}.txt`), file);
    done += file.length;
  }
  mkdirSync(join(dir, 'binary'), { recursive: true });
  for (let done = 0, n = 0; done < total * 0.4; n += 1) {
    writeFileSync(join(dir, 'binary', `blob-${n}.bin`), randomBytes(32 * MIB));
    done += 32 * MIB;
  }
  const folders = Math.round(800 * gib);
  const small = Math.round(24_600 * gib);
  const next = numbers(11);
  const smallText = text(16 * 1024 * 64, 3);
  for (let i = 0; i < small; i += 1) {
    const folder = join(dir, 'small', `p${i % 40}`, `d${i % folders}`);
    if (i < folders) mkdirSync(folder, { recursive: true });
    const size = 1024 + (next() % (15 * 1024));
    // Half of the small files are text, half binary, as in a home folder.
    const body =
      i % 2 === 0
        ? smallText.subarray((i * 1031) % (smallText.length - size)).subarray(0, size)
        : randomBytes(size);
    writeFileSync(join(folder, `f${i}.dat`), body);
  }
  // A few symlinks, whose own mtimes a restore must keep too.
  mkdirSync(join(dir, 'links'));
  for (let i = 0; i < 20; i += 1) {
    const link = join(dir, 'links', `to-doc-${i}`);
    symlinkSync(`../text/doc-${i}.txt`, link);
    lutimesSync(link, fixed, new Date(fixed.getTime() - i * 86_400_000));
  }
  for (const sub of ['text', 'binary', 'small', 'links']) utimesSync(join(dir, sub), fixed, fixed);
  writeFileSync(join(dir, '.complete'), '');
}

/**
 * The small-files dataset of issue #27 item 6 (mail spools, source trees, `node_modules`):
 * `files` files of 0–4 KiB (default a million) in `files / 100` folders (two levels:
 * `t<i>/f<j>`, 100 files each), 70 % word text, 25 % incompressible bytes, 5 % empty.
 * Deterministic (the same bytes and names on every machine; folder mtimes fixed), written with one
 * open/write/close per file from two reused blocks, and made once per count (`.complete`).
 */
export function generateSmallFiles(dir: string, files: number): void {
  if (existsSync(join(dir, '.complete'))) return;
  rmSync(dir, { recursive: true, force: true });
  const fixed = new Date('2025-06-01T12:00:00Z');
  const perFolder = 100;
  const folders = Math.ceil(files / perFolder);
  const top = Math.ceil(Math.sqrt(folders));
  const next = numbers(17);
  const words = text(4 * MIB, 5);
  // Deterministic incompressible bytes: xorshift words, not a random source.
  const noise = Buffer.allocUnsafe(4 * MIB);
  for (let at = 0; at < noise.length; at += 4) noise.writeUInt32LE(next(), at);
  for (let folder = 0; folder < folders; folder += 1) {
    const path = join(dir, `t${folder % top}`, `f${Math.floor(folder / top)}`);
    mkdirSync(path, { recursive: true });
    for (let i = folder * perFolder; i < Math.min(files, (folder + 1) * perFolder); i += 1) {
      const kind = next() % 20;
      const size = kind === 0 ? 0 : next() % 4097;
      const source = kind < 6 ? noise : words;
      const from = next() % (source.length - size);
      writeFileSync(join(path, `${i}${kind < 6 ? '.bin' : '.txt'}`), source.subarray(from, from + size));
    }
    utimesSync(path, fixed, fixed);
  }
  for (let t = 0; t < top; t += 1)
    if (existsSync(join(dir, `t${t}`))) utimesSync(join(dir, `t${t}`), fixed, fixed);
  writeFileSync(join(dir, '.complete'), '');
}
