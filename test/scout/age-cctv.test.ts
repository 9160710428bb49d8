// The age reader against the C2SP CCTV age test vectors (c2sp.org/CCTV/age, npm `cctv-age`):
// every binary vector whose identities are all X25519 must end as the vector expects — the
// payload hash on success, the same kind of failure otherwise, and on a payload failure only
// the plaintext released before it. Armored vectors run through the reader with armor on
// (as the vector says; successes also with the armor detected from the first byte). Passphrase
// (scrypt) and hybrid post-quantum vectors are out of scope.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import * as vectors from 'cctv-age';
import { type AgeFailure, createAgeDecrypt } from '../../src/scout/archive/age.ts';
import { generateScoutKey, parseScoutKey, type ScoutKey } from '../../src/scout/archive/x25519.ts';
import { consumed, PiecePool } from '../../src/scout/restore/piece-pool.ts';

interface Vector {
  name: string;
  expect: string;
  payload: string | null;
  identities: string[];
  passphrases: number;
  armored: boolean;
  file: Buffer;
}

function readVector(name: string, bytes: Uint8Array): Vector {
  const all = Buffer.from(bytes);
  const split = all.indexOf('\n\n');
  const fields = all
    .subarray(0, split)
    .toString('utf8')
    .split('\n')
    .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)] as const);
  const values = (key: string) => fields.filter(([k]) => k === key).map(([, v]) => v);
  const body = all.subarray(split + 2);
  return {
    name,
    expect: values('expect')[0] ?? '',
    payload: values('payload')[0] ?? null,
    identities: values('identity'),
    passphrases: values('passphrase').length,
    armored: values('armored')[0] === 'yes',
    file: values('compressed')[0] === 'zlib' ? inflateSync(body) : body,
  };
}

const EXPECTED: Record<string, AgeFailure | 'success'> = {
  success: 'success',
  'header failure': 'header',
  'no match': 'no_match',
  'HMAC failure': 'hmac',
  'payload failure': 'payload',
  'armor failure': 'armor',
};

const all = Object.entries(vectors as Record<string, Uint8Array>)
  .filter(([name]) => name !== 'default')
  .map(([name, bytes]) => readVector(name, bytes));
const x25519Only = (v: Vector) =>
  v.passphrases === 0 && v.identities.every((id) => id.startsWith('AGE-SECRET-KEY-1'));
const binary = all.filter((v) => !v.armored && x25519Only(v));
const armored = all.filter((v) => v.armored && x25519Only(v));

/** Runs the file through the reader in `piece`-byte writes; what it released and how it ended. */
async function decrypt(
  keys: ScoutKey[],
  file: Buffer,
  piece: number,
  armor: boolean | 'auto' = 'auto',
  pooled = false,
) {
  const pieces: Buffer[] = [];
  for (let at = 0; at < file.length; at += piece) pieces.push(file.subarray(at, at + piece));
  const hash = createHash('sha256');
  // Pooled: the restore's way, blocks reused as soon as the next stage is done with them.
  const output = pooled ? new PiecePool({ size: 64 * 1024, keep: 1 }) : undefined;
  const reader = createAgeDecrypt(keys, { armor, output });
  // A 'data' listener sees every chunk as it is released, even when an error follows at once.
  reader.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    consumed(chunk);
  });
  const ended = new Promise<unknown>((resolve) => {
    reader.on('end', () => resolve(null));
    reader.on('error', resolve);
  });
  await new Promise((resolve) => setImmediate(resolve));
  for (const part of pieces) {
    if (reader.destroyed) break;
    reader.write(part);
  }
  reader.end();
  const error = await ended;
  const outcome = error === null ? 'success' : ((error as { kind?: AgeFailure }).kind ?? 'unknown');
  return { outcome, error, sha256: hash.digest('hex') };
}

async function check(vector: Vector, armor: boolean | 'auto'): Promise<void> {
  const expected = EXPECTED[vector.expect];
  assert.ok(expected, `unknown expectation "${vector.expect}"`);
  // A vector without identities still needs one to try: a fresh key that matches nothing.
  const keys = vector.identities.length > 0 ? vector.identities.map(parseScoutKey) : [generateScoutKey()];
  // Whole, and in small odd pieces that split header lines and chunk boundaries.
  const small = vector.file.length <= 256 * 1024 ? 7 : 4099;
  for (const [piece, pooled] of [
    [vector.file.length || 1, false],
    [small, false],
    [small, true],
  ] as const) {
    const { outcome, error, sha256 } = await decrypt(keys, vector.file, piece, armor, pooled);
    assert.equal(outcome, expected, `pieces of ${piece}${pooled ? ', pooled' : ''}: ${String(error)}`);
    if (error !== null) assert.equal((error as Error).name, 'AgeError', String(error));
    if (expected === 'success' || expected === 'payload') {
      assert.equal(sha256, vector.payload, `pieces of ${piece}: released plaintext differs`);
    }
  }
}

describe('C2SP CCTV age vectors: binary, X25519 identities', () => {
  test('the package holds the vectors this suite expects', () => {
    assert.ok(binary.length >= 60, `only ${binary.length} binary X25519 vectors found`);
    assert.ok(armored.length >= 25, `only ${armored.length} armored X25519 vectors found`);
    for (const name of [
      'stanza_empty_argument',
      'stanza_long_line',
      'x25519',
      'stream_two_chunks',
      'armor_crlf',
    ]) {
      assert.ok(
        all.some((v) => v.name === name),
        `vector ${name} missing`,
      );
    }
  });

  for (const vector of binary) {
    test(`${vector.name}: ${vector.expect}`, () => check(vector, 'auto'));
  }
});

describe('C2SP CCTV age vectors: ASCII-armored, X25519 identities', () => {
  for (const vector of armored) {
    test(`${vector.name}: ${vector.expect}`, async () => {
      await check(vector, true);
      if (vector.expect === 'success') await check(vector, 'auto');
    });
  }
});
