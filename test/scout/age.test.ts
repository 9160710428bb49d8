// Scout keys and the age v1 archive encryption (age-encryption.org/v1, c2sp.org/age), proved
// against the `age` and `age-keygen` programs both ways, through the tar | zstd | age pipeline
// of docs/archive-format.md, against tampering, and against the spec's MUSTs on hand-built files.
// The programs are required in CI (CI=true); elsewhere tests that need them are skipped.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import {
  createCipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { createZstdCompress, constants as zlibConstants } from 'node:zlib';
import { AgeError, createAgeDecrypt } from '../../src/scout/archive/age.ts';
import {
  generateScoutKey,
  parseRecipient,
  parseScoutKey,
  type ScoutKey,
  scoutKeyFromSecret,
  x25519,
} from '../../src/scout/archive/x25519.ts';
import { bech32Encode } from '../../src/shared/bech32.ts';
import { sealFile } from '../helpers/age-seal.ts';
import { sha256 } from '../helpers/hashes.ts';
import { IN_CI, missingPrograms } from '../helpers/programs.ts';

const CHUNK = 64 * 1024;
const SEALED = CHUNK + 16;
const SIZES = [0, 1, 65535, 65536, 65537, 2 * 65536, 3 * 65536 + 5, 1_000_003];

// ---------------------------------------------------------------------------------------------
// External programs: required in CI, skipped with a message elsewhere.

type Program = 'age' | 'age-keygen' | 'zstd' | 'tar';
const MISSING = new Set<Program>(missingPrograms(['age', 'age-keygen', 'zstd', 'tar']));

function toolTest(name: string, programs: Program[], fn: () => Promise<void>): void {
  const missing = programs.filter((program) => MISSING.has(program));
  const skip = missing.length > 0 && !IN_CI ? `needs ${missing.join(', ')}, which is not installed` : false;
  test(name, { skip }, async () => {
    if (missing.length > 0) assert.fail(`CI=true but ${missing.join(', ')} is not installed`);
    await fn();
  });
}

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Waits for a program; captures its stdout unless that is piped elsewhere. */
function collect(child: ChildProcessWithoutNullStreams, captureStdout = true): Promise<RunResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  if (captureStdout) child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  // A program that fails may exit before reading all its input.
  child.stdin.on('error', () => {});
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }),
    );
  });
}

/** Runs one program with an argument array, feeding `input` on stdin. */
function run(file: string, args: string[], input: Buffer = Buffer.alloc(0)): Promise<RunResult> {
  const child = spawn(file, args);
  const done = collect(child);
  child.stdin.end(input);
  return done;
}

async function runOk(file: string, args: string[], input?: Buffer): Promise<Buffer> {
  const result = await run(file, args, input);
  assert.equal(result.code, 0, `${file} ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** `a | b | c`: spawns each program and connects stdout to the next stdin. */
async function chain(commands: [string, string[]][], input: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  const children = commands.map(([file, args]) => spawn(file, args));
  const results = children.map((child, i) => collect(child, i === children.length - 1));
  children.forEach((child, i) => {
    const next = children[i + 1];
    if (next) child.stdout.pipe(next.stdin);
  });
  children[0]?.stdin.end(input);
  const settled = await Promise.all(results);
  settled.forEach((result, i) => {
    const [file, args] = commands[i] ?? ['?', []];
    assert.equal(result.code, 0, `${file} ${args.join(' ')} failed: ${result.stderr}`);
  });
  return settled[settled.length - 1]?.stdout ?? Buffer.alloc(0);
}

// ---------------------------------------------------------------------------------------------
// Streaming helpers.

function* pieces(data: Buffer, size: number): Generator<Buffer> {
  for (let offset = 0; offset < data.length; offset += size) yield data.subarray(offset, offset + size);
}

/** Pushes `data` through `transform` in pieces of `size` bytes; the output, or the stream's error. */
async function outcome(
  transform: Transform,
  data: Buffer,
  size = Math.max(1, data.length),
): Promise<{ output: Buffer; error: unknown }> {
  const out: Buffer[] = [];
  let error: unknown = null;
  try {
    await pipeline(Readable.from(pieces(data, size)), transform, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    });
  } catch (caught) {
    error = caught;
  }
  return { output: Buffer.concat(out), error };
}

async function through(transform: Transform, data: Buffer, size?: number): Promise<Buffer> {
  const { output, error } = await outcome(transform, data, size);
  if (error) throw error;
  return output;
}

/** `data` encrypted to `key` by the archive's own sealing worker, handed over in pieces of `size` bytes. */
let sealedFiles = 0;
async function encrypt(key: ScoutKey, data: Buffer, size = Math.max(1, data.length)): Promise<Buffer> {
  sealedFiles += 1;
  const path = join(dir, `sealed-${sealedFiles}.age`);
  await sealFile(key.publicKey, pieces(data, size), path);
  const sealed = await readFile(path);
  await rm(path);
  return sealed;
}
const decrypt = (keys: ScoutKey[], data: Buffer, size?: number) =>
  through(createAgeDecrypt(keys), data, size);

/** Where the parts of an age file start. */
function layout(file: Buffer): { macStart: number; headerEnd: number; payloadStart: number } {
  const mark = file.indexOf('\n---');
  assert.ok(mark > 0, 'no header MAC line');
  const headerEnd = file.indexOf('\n', mark + 1) + 1;
  return { macStart: mark + 5, headerEnd, payloadStart: headerEnd + 16 };
}

/** The size age-encryption.org/v1 fixes for `size` plaintext bytes behind a header. */
function expectedPayloadSize(size: number): number {
  const chunks = Math.max(1, Math.ceil(size / CHUNK));
  return 16 + size + 16 * chunks;
}

/** Decryption of a damaged file must error, and whatever it let out must be true plaintext. */
async function assertRejected(
  key: ScoutKey,
  damaged: Buffer,
  plaintext: Buffer,
  label: string,
  size?: number,
) {
  const { output, error } = await outcome(createAgeDecrypt([key]), damaged, size);
  assert.ok(error instanceof Error, `${label}: decryption must fail with an error, it succeeded`);
  assert.ok(output.length <= plaintext.length, `${label}: more output than plaintext`);
  assert.ok(
    output.equals(plaintext.subarray(0, output.length)),
    `${label}: bytes released before the error are not the plaintext`,
  );
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

let dir: string;
let key: ScoutKey;
let other: ScoutKey;
let keyFile: string;
const plaintexts = new Map<number, Buffer>();

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'backupd-age-'));
  key = generateScoutKey();
  other = generateScoutKey();
  keyFile = join(dir, 'key.txt');
  await writeFile(keyFile, `# a Scout key\n${key.ageIdentity}\n`, { mode: 0o600 });
  for (const size of SIZES) plaintexts.set(size, randomBytes(size));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function plaintext(size: number): Buffer {
  const data = plaintexts.get(size);
  assert.ok(data, `no plaintext of ${size} bytes`);
  return data;
}

let fileCounter = 0;
async function tempFile(data: Buffer): Promise<string> {
  fileCounter += 1;
  const path = join(dir, `file-${fileCounter}.age`);
  await writeFile(path, data);
  return path;
}

// ---------------------------------------------------------------------------------------------

describe('Scout keys', () => {
  toolTest(
    'age-keygen -y accepts age_identity and prints exactly age_recipient',
    ['age-keygen'],
    async () => {
      for (const k of [key, other, generateScoutKey()]) {
        const path = await tempFile(Buffer.from(`${k.ageIdentity}\n`));
        const recipient = (await runOk('age-keygen', ['-y', path])).toString();
        assert.equal(recipient, `${k.ageRecipient}\n`);
        assert.match(k.ageIdentity, /^AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}$/);
        assert.match(k.ageRecipient, /^age1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}$/);
      }
    },
  );

  test('fingerprint is the lowercase hex SHA-256 of the 32-byte public key', () => {
    for (const k of [key, other]) {
      assert.equal(k.publicKey.length, 32);
      assert.equal(k.secret.length, 32);
      assert.match(k.fingerprint, /^[0-9a-f]{64}$/);
      assert.equal(k.fingerprint, sha256(k.publicKey));
      assert.equal(k.fingerprint, sha256(parseRecipient(k.ageRecipient)));
    }
    assert.notEqual(key.fingerprint, other.fingerprint);
  });

  test('key_base64 is unpadded base64url of the secret and parseScoutKey reads it and the age identity', () => {
    for (const k of [
      key,
      other,
      scoutKeyFromSecret(Buffer.alloc(32, 0xff)),
      scoutKeyFromSecret(Buffer.alloc(32)),
    ]) {
      assert.match(k.keyBase64, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(Buffer.from(k.keyBase64, 'base64url'), k.secret);
      for (const text of [k.keyBase64, `${k.keyBase64}\n`, k.ageIdentity, `  ${k.ageIdentity}\n`]) {
        const parsed = parseScoutKey(text);
        assert.deepEqual(parsed.secret, k.secret, text);
        assert.deepEqual(parsed.publicKey, k.publicKey, text);
        assert.equal(parsed.fingerprint, k.fingerprint, text);
        assert.equal(parsed.keyBase64, k.keyBase64, text);
        assert.equal(parsed.ageIdentity, k.ageIdentity, text);
        assert.equal(parsed.ageRecipient, k.ageRecipient, text);
      }
      assert.deepEqual(parseRecipient(k.ageRecipient), k.publicKey);
    }
  });

  test('known answers: RFC 7748 X25519 vector and the age spec sample key', () => {
    const alice = scoutKeyFromSecret(
      Buffer.from('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a', 'hex'),
    );
    const bob = scoutKeyFromSecret(
      Buffer.from('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb', 'hex'),
    );
    assert.equal(
      alice.publicKey.toString('hex'),
      '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
    );
    assert.equal(
      bob.publicKey.toString('hex'),
      'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f',
    );
    const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
    assert.equal(x25519(alice.secret, bob.publicKey).toString('hex'), shared);
    assert.equal(x25519(bob.secret, alice.publicKey).toString('hex'), shared);

    const sample = parseScoutKey(
      'AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX',
    );
    assert.equal(sample.ageRecipient, 'age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj');
    assert.equal(
      sample.ageIdentity,
      'AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX',
    );
  });

  toolTest(
    'an identity made by age-keygen is read by parseScoutKey; its recipient matches age-keygen -y',
    ['age-keygen'],
    async () => {
      const path = join(dir, 'keygen.txt');
      await runOk('age-keygen', ['-o', path]);
      const text = await readFile(path, 'utf8');
      const identity = text.split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
      assert.ok(identity, text);
      const parsed = parseScoutKey(identity);
      assert.equal(parsed.ageIdentity, identity);
      const recipient = (await runOk('age-keygen', ['-y', path])).toString().trim();
      assert.equal(parsed.ageRecipient, recipient);
      assert.match(text, new RegExp(`# public key: ${recipient}`));
      assert.deepEqual(parseRecipient(recipient), parsed.publicKey);
    },
  );

  test('bad key texts are refused', () => {
    const secret = Buffer.alloc(32, 0xff); // base64url "____…", so its standard-alphabet form differs
    const good = scoutKeyFromSecret(secret);
    const identity = key.ageIdentity;
    const lastData = identity.length - 7; // a data character, not the checksum
    const flip = (text: string, at: number, alphabet: string) => {
      const current = text[at] ?? '';
      const replacement = [...alphabet].find((ch) => ch !== current) ?? '';
      return `${text.slice(0, at)}${replacement}${text.slice(at + 1)}`;
    };
    const letterAt = [...identity].findIndex((ch, i) => i > 16 && /[A-Z]/.test(ch));
    const bad: [string, string][] = [
      ['empty', ''],
      ['31 bytes', randomBytes(31).toString('base64url')],
      ['33 bytes', randomBytes(33).toString('base64url')],
      ['padded base64url', `${good.keyBase64}=`],
      ['standard base64 alphabet', good.keyBase64.replaceAll('_', '/')],
      ['not base64', '!'.repeat(43)],
      [
        'mixed-case identity',
        `${identity.slice(0, letterAt)}${identity[letterAt]?.toLowerCase()}${identity.slice(letterAt + 1)}`,
      ],
      ['identity with a bad checksum', flip(identity, identity.length - 1, 'QPZRY9X8')],
      ['identity with a changed data character', flip(identity, lastData, 'QPZRY9X8')],
      ['identity with another HRP', bech32Encode('AGE-PLUGIN-FOO-', secret).toUpperCase()],
      ['identity of 31 bytes', bech32Encode('AGE-SECRET-KEY-', randomBytes(31)).toUpperCase()],
      ['identity of 33 bytes', bech32Encode('AGE-SECRET-KEY-', randomBytes(33)).toUpperCase()],
      ['a recipient is not a key', key.ageRecipient],
    ];
    const accepted = (parse: (text: string) => unknown, cases: [string, string][]) =>
      cases
        .filter(([, text]) => {
          try {
            parse(text);
            return true;
          } catch (error) {
            assert.ok(error instanceof Error);
            return false;
          }
        })
        .map(([label, text]) => `${label}: ${JSON.stringify(text)}`);
    const wronglyAccepted = accepted(parseScoutKey, bad);
    const recipient = key.ageRecipient;
    const badRecipients: [string, string][] = [
      ['empty', ''],
      ['an identity is not a recipient', key.ageIdentity],
      ['bad checksum', flip(recipient, recipient.length - 1, 'qpzry9x8')],
      ['changed data character', flip(recipient, 10, 'qpzry9x8')],
      ['mixed case', `${recipient.slice(0, 10)}${recipient.slice(10).toUpperCase()}`],
      ['31 bytes', bech32Encode('age', randomBytes(31))],
      ['another HRP', bech32Encode('age1pq', key.publicKey)],
    ];
    assert.deepEqual(wronglyAccepted, [], 'parseScoutKey must refuse these');
    assert.deepEqual(accepted(parseRecipient, badRecipients), [], 'parseRecipient must refuse these');
  });
});

// ---------------------------------------------------------------------------------------------

describe('ours → age', () => {
  for (const size of SIZES) {
    toolTest(`${size} bytes decrypt with age -d -i to the same bytes`, ['age'], async () => {
      const data = plaintext(size);
      const sealed = await encrypt(key, data);
      assert.ok(sealed.subarray(0, 32).toString('latin1').startsWith('age-encryption.org/v1\n-> X25519 '));
      assert.equal(
        sealed.length - layout(sealed).headerEnd,
        expectedPayloadSize(size),
        'STREAM payload size',
      );
      const path = await tempFile(sealed);
      const opened = await runOk('age', ['-d', '-i', keyFile, path]);
      assert.ok(opened.equals(data), `age -d output differs (${opened.length} vs ${data.length} bytes)`);
      // And through stdin.
      assert.ok((await runOk('age', ['-d', '-i', keyFile], sealed)).equals(data));
    });
  }

  for (const [pieceSize, size] of [
    [1, 70_000],
    [1000, 3 * 65536 + 5],
    [70_000, 1_000_003],
  ] as const) {
    toolTest(`${size} bytes written in ${pieceSize}-byte pieces decrypt with age -d`, ['age'], async () => {
      const data = plaintexts.get(size) ?? randomBytes(size);
      const sealed = await encrypt(key, data, pieceSize);
      assert.equal(sealed.length - layout(sealed).headerEnd, expectedPayloadSize(size));
      const opened = await runOk('age', ['-d', '-i', keyFile, await tempFile(sealed)]);
      assert.ok(opened.equals(data));
    });
  }

  test('every encryption uses a fresh file key, share and nonce', async () => {
    const data = plaintext(65537);
    const a = await encrypt(key, data);
    const b = await encrypt(key, data);
    assert.equal(a.length, b.length);
    assert.ok(!a.equals(b));
    const shareA = a.toString('latin1').split('\n')[1];
    const shareB = b.toString('latin1').split('\n')[1];
    assert.notEqual(shareA, shareB);
    const nonceA = a.subarray(layout(a).headerEnd, layout(a).payloadStart);
    const nonceB = b.subarray(layout(b).headerEnd, layout(b).payloadStart);
    assert.ok(!nonceA.equals(nonceB));
    assert.ok((await decrypt([key], a)).equals(data));
    assert.ok((await decrypt([key], b)).equals(data));
  });
});

// ---------------------------------------------------------------------------------------------

describe('age → ours', () => {
  for (const size of SIZES) {
    toolTest(`${size} bytes from age -r decrypt with createAgeDecrypt`, ['age'], async () => {
      const data = plaintext(size);
      const single = await runOk('age', ['-r', key.ageRecipient], data);
      assert.ok((await decrypt([key], single)).equals(data), 'one recipient');
      const double = await runOk('age', ['-r', other.ageRecipient, '-r', key.ageRecipient], data);
      assert.equal(double.toString('latin1').split('\n-> X25519 ').length - 1, 2, 'two X25519 stanzas');
      assert.ok((await decrypt([key], double)).equals(data), 'two recipients, ours second');
      assert.ok((await decrypt([other], double)).equals(data), 'two recipients, the first');
    });
  }

  for (const [pieceSize, size] of [
    [7, 1000],
    [7, 65537],
    [1000, 3 * 65536 + 5],
    [SEALED - 1, 3 * 65536 + 5],
    [SEALED + 1, 1_000_003],
  ] as const) {
    toolTest(`${size} bytes from age fed in ${pieceSize}-byte pieces`, ['age'], async () => {
      const data = plaintexts.get(size) ?? randomBytes(size);
      const sealed = await runOk('age', ['-r', other.ageRecipient, '-r', key.ageRecipient], data);
      assert.ok((await decrypt([key], sealed, pieceSize)).equals(data));
    });
  }

  toolTest(
    'ASCII-armored files from age -a are recognised and decrypt (whole and in pieces)',
    ['age'],
    async () => {
      for (const size of [0, 100, 65536, 200_003]) {
        const data = plaintexts.get(size) ?? randomBytes(size);
        const armored = await runOk('age', ['-a', '-r', key.ageRecipient], data);
        assert.match(armored.toString('latin1'), /^-----BEGIN AGE ENCRYPTED FILE-----\n/);
        assert.ok((await decrypt([key], armored)).equals(data), `${size} bytes whole`);
        assert.ok((await decrypt([key], armored, 7)).equals(data), `${size} bytes in 7-byte pieces`);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------

describe('keyring', () => {
  test('the right key anywhere in the list opens the archive', async () => {
    const data = plaintext(65537);
    const sealed = await encrypt(key, data);
    assert.ok((await decrypt([other, key], sealed)).equals(data));
    assert.ok((await decrypt([key, other], sealed)).equals(data));
    assert.ok((await decrypt([generateScoutKey(), other, key], sealed, 999)).equals(data));
  });

  test('no matching key: an AgeError that says no key matches', async () => {
    const sealed = await encrypt(key, plaintext(1));
    for (const keys of [[other], [other, generateScoutKey()], []]) {
      const { output, error } = await outcome(createAgeDecrypt(keys), sealed);
      assert.ok(error instanceof AgeError, `expected an AgeError, got ${String(error)}`);
      assert.match(error.message, /no key matches/i);
      assert.equal(output.length, 0);
    }
  });

  toolTest('no matching key for a file from age -r', ['age'], async () => {
    const sealed = await runOk('age', ['-r', other.ageRecipient], plaintext(1));
    const { error } = await outcome(createAgeDecrypt([key]), sealed);
    assert.ok(error instanceof AgeError, `expected an AgeError, got ${String(error)}`);
    assert.match(error.message, /no key matches/i);
  });
});

// ---------------------------------------------------------------------------------------------

describe('integrity', () => {
  const flipByte = (file: Buffer, at: number) => {
    const copy = Buffer.from(file);
    copy[at] = (copy[at] ?? 0) ^ 0x01;
    return copy;
  };
  const replaceChar = (file: Buffer, at: number) => {
    const copy = Buffer.from(file);
    const current = String.fromCharCode(copy[at] ?? 0);
    copy[at] = (current === 'A' ? 'B' : 'A').charCodeAt(0);
    return copy;
  };

  async function damageCases(sealed: Buffer, size: number): Promise<[string, Buffer][]> {
    const { macStart, headerEnd, payloadStart } = layout(sealed);
    const lines = sealed.subarray(0, headerEnd).toString('latin1').split('\n');
    const bodyStart = (lines[0]?.length ?? 0) + 1 + (lines[1]?.length ?? 0) + 1;
    const chunks = Math.max(1, Math.ceil(size / CHUNK));
    const lastChunkStart = payloadStart + (chunks - 1) * SEALED;
    const cases: [string, Buffer][] = [
      ['header MAC character changed', replaceChar(sealed, macStart + 10)],
      ['header MAC first character changed', replaceChar(sealed, macStart)],
      ['stanza body character changed', replaceChar(sealed, bodyStart + 5)],
      ['stanza share character changed', replaceChar(sealed, (lines[0]?.length ?? 0) + 1 + 12)],
      ['version line changed', replaceChar(sealed, 0)],
      ['payload nonce byte flipped', flipByte(sealed, headerEnd + 3)],
      ['first payload chunk byte flipped', flipByte(sealed, Math.min(payloadStart + 100, sealed.length - 1))],
      [
        'first payload chunk tag flipped',
        flipByte(sealed, Math.min(payloadStart + SEALED, sealed.length) - 1),
      ],
      ['last chunk byte flipped', flipByte(sealed, lastChunkStart + 1)],
      ['last chunk tag flipped', flipByte(sealed, sealed.length - 1)],
      ['last chunk truncated by 1 byte', sealed.subarray(0, sealed.length - 1)],
      ['last chunk truncated by 17 bytes', sealed.subarray(0, Math.max(payloadStart, sealed.length - 17))],
      ['cut inside the payload nonce', sealed.subarray(0, headerEnd + 8)],
      ['cut right after the payload nonce', sealed.subarray(0, payloadStart)],
      ['cut inside the header', sealed.subarray(0, macStart + 3)],
      ['1 byte appended', Buffer.concat([sealed, Buffer.from([0])])],
      ['16 bytes appended', Buffer.concat([sealed, randomBytes(16)])],
      ['70000 bytes appended', Buffer.concat([sealed, randomBytes(70_000)])],
      ['the file repeated', Buffer.concat([sealed, sealed])],
    ];
    if (chunks > 1) {
      cases.push(['whole last chunk dropped (cut at a chunk boundary)', sealed.subarray(0, lastChunkStart)]);
      const swapped = Buffer.from(sealed);
      sealed.copy(swapped, payloadStart, payloadStart + SEALED, payloadStart + 2 * SEALED);
      sealed.copy(swapped, payloadStart + SEALED, payloadStart, payloadStart + SEALED);
      if (chunks > 2) cases.push(['first two chunks swapped', swapped]);
    }
    return cases;
  }

  for (const size of [0, 1000, 2 * 65536, 3 * 65536 + 5]) {
    test(`damaged archives of ${size} bytes are refused with an error`, async () => {
      const data = plaintexts.get(size) ?? randomBytes(size);
      const sealed = await encrypt(key, data);
      assert.ok((await decrypt([key], sealed)).equals(data));
      for (const [label, damaged] of await damageCases(sealed, size)) {
        await assertRejected(key, damaged, data, label);
        await assertRejected(key, damaged, data, `${label} (in 1000-byte pieces)`, 1000);
      }
    });
  }

  test('a full final chunk followed by an empty chunk is refused (no empty final chunk)', async () => {
    const data = plaintext(65536);
    const fileKey = randomBytes(16);
    const built = handBuilt({ fileKey, stanzas: [x25519Lines(key.publicKey, fileKey)], plaintext: data });
    assert.ok((await decrypt([key], built)).equals(data), 'the hand-built file is valid');
    const trailingEmpty = handBuilt({
      fileKey,
      stanzas: [x25519Lines(key.publicKey, fileKey)],
      plaintext: data,
      chunks: [data, Buffer.alloc(0)],
    });
    await assertRejected(key, trailingEmpty, data, 'empty final chunk after a full one');
  });
});

// ---------------------------------------------------------------------------------------------
// A reference age v1 writer, written from the spec and independent of src/, so tests can build
// files the spec allows or forbids with a valid header MAC.

const hkdf = (ikm: Uint8Array, salt: Uint8Array, info: string) =>
  Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));
const rawBase64 = (data: Uint8Array) => Buffer.from(data).toString('base64').replace(/=+$/, '');

function chachaSeal(k: Uint8Array, nonce: Uint8Array, plain: Uint8Array): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', k, nonce, { authTagLength: 16 });
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function x25519Keys(secret: Uint8Array) {
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.from(secret)]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x ?? '', 'base64url');
  return { privateKey, publicKey };
}

const publicKeyObject = (publicKey: Uint8Array) =>
  createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(publicKey).toString('base64url') },
    format: 'jwk',
  });

/** Stanza body text wrapped at 64 columns, always ending with a line shorter than 64. */
function bodyLines(text: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 64) lines.push(text.slice(i, i + 64));
  if (text.length % 64 === 0) lines.push('');
  return lines;
}

function x25519Lines(
  recipient: Buffer,
  fileKey: Buffer,
  edit: { share?: (text: string) => string; extraArgs?: string[]; shareBytes?: Buffer } = {},
): string[] {
  const ephemeral = x25519Keys(randomBytes(32));
  const share = edit.shareBytes ?? ephemeral.publicKey;
  const shared = edit.shareBytes
    ? Buffer.alloc(32)
    : diffieHellman({ privateKey: ephemeral.privateKey, publicKey: publicKeyObject(recipient) });
  const wrapKey = hkdf(shared, Buffer.concat([share, recipient]), 'age-encryption.org/v1/X25519');
  const body = chachaSeal(wrapKey, Buffer.alloc(12), fileKey);
  const shareText = (edit.share ?? ((text) => text))(rawBase64(share));
  return [['->', 'X25519', shareText, ...(edit.extraArgs ?? [])].join(' '), ...bodyLines(rawBase64(body))];
}

function handBuilt(options: {
  fileKey: Buffer;
  stanzas: string[][];
  plaintext: Buffer;
  version?: string;
  mac?: (text: string) => string;
  chunks?: Buffer[];
}): Buffer {
  const head = [options.version ?? 'age-encryption.org/v1', ...options.stanzas.flat()].join('\n');
  const macInput = `${head}\n---`;
  const mac = createHmac('sha256', hkdf(options.fileKey, Buffer.alloc(0), 'header'))
    .update(macInput)
    .digest();
  const nonce = randomBytes(16);
  const payloadKey = hkdf(options.fileKey, nonce, 'payload');
  const chunks = options.chunks ?? [...pieces(options.plaintext, CHUNK)];
  if (chunks.length === 0) chunks.push(Buffer.alloc(0));
  const sealed = chunks.map((chunk, i) => {
    const chunkNonce = Buffer.alloc(12);
    chunkNonce.writeUIntBE(i, 5, 6);
    chunkNonce[11] = i === chunks.length - 1 ? 1 : 0;
    return chachaSeal(payloadKey, chunkNonce, chunk);
  });
  const macText = (options.mac ?? ((text) => text))(rawBase64(mac));
  return Buffer.concat([Buffer.from(`${macInput} ${macText}\n`, 'latin1'), nonce, ...sealed]);
}

/** Changes the last base64 character only in its unused low bits: same bytes, non-canonical text. */
function nonCanonical(text: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const last = alphabet.indexOf(text[text.length - 1] ?? 'A');
  return `${text.slice(0, -1)}${alphabet[last ^ 1]}`;
}

describe('age spec conformance on hand-built files (age -d as the reference)', () => {
  async function ageAccepts(file: Buffer): Promise<boolean> {
    return (await run('age', ['-d', '-i', keyFile], file)).code === 0;
  }

  toolTest(
    'a valid hand-built file with unknown stanzas (a 64-column body) opens in both',
    ['age'],
    async () => {
      const data = plaintext(65537);
      const fileKey = randomBytes(16);
      const file = handBuilt({
        fileKey,
        plaintext: data,
        stanzas: [
          ['-> unknown-grease a+b c', ...bodyLines(rawBase64(randomBytes(48)))], // 64 columns, then ""
          ['-> another.example/type', ...bodyLines('')],
          x25519Lines(other.publicKey, fileKey),
          x25519Lines(key.publicKey, fileKey),
        ],
      });
      assert.ok(await ageAccepts(file), 'age must accept the reference file');
      assert.ok((await decrypt([key], file)).equals(data));
      assert.ok((await decrypt([key], file, 7)).equals(data));
    },
  );

  const refused: [string, (fileKey: Buffer) => Parameters<typeof handBuilt>[0]][] = [
    [
      'a non-canonical base64 share',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey, { share: nonCanonical })],
      }),
    ],
    [
      'a non-canonical base64 header MAC',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey)],
        mac: nonCanonical,
      }),
    ],
    [
      'a header MAC with = padding',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey)],
        mac: (text) => `${text}=`,
      }),
    ],
    [
      'an X25519 stanza with a third argument',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey, { extraArgs: ['1234'] })],
      }),
    ],
    [
      'an all-zero share (the shared secret is all zero)',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey, { shareBytes: Buffer.alloc(32) })],
      }),
    ],
    [
      'version line age-encryption.org/v2',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(1),
        stanzas: [x25519Lines(key.publicKey, fileKey)],
        version: 'age-encryption.org/v2',
      }),
    ],
    ['a header without stanzas', (fileKey) => ({ fileKey, plaintext: plaintext(1), stanzas: [] })],
    [
      'an empty final chunk after a full one',
      (fileKey) => ({
        fileKey,
        plaintext: plaintext(65536),
        stanzas: [x25519Lines(key.publicKey, fileKey)],
        chunks: [plaintext(65536), Buffer.alloc(0)],
      }),
    ],
  ];

  for (const [label, options] of refused) {
    toolTest(`refused: ${label}`, ['age'], async () => {
      const built = options(randomBytes(16));
      const file = handBuilt(built);
      assert.equal(await ageAccepts(file), false, `age -d accepts ${label}, so the test itself is wrong`);
      await assertRejected(key, file, built.plaintext, `createAgeDecrypt must refuse ${label}`);
    });
  }
});

// ---------------------------------------------------------------------------------------------

interface Entry {
  path: string;
  type: 'file' | 'dir' | 'link';
  mode: number;
  content: string;
}

async function walk(root: string, prefix = ''): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (const name of (await readdir(join(root, prefix))).sort()) {
    const path = prefix ? `${prefix}/${name}` : name;
    const full = join(root, path);
    const stat = await lstat(full);
    if (stat.isSymbolicLink()) entries.push({ path, type: 'link', mode: 0, content: await readlink(full) });
    else if (stat.isDirectory()) {
      entries.push({ path, type: 'dir', mode: stat.mode & 0o7777, content: '' });
      entries.push(...(await walk(root, path)));
    } else {
      const content = createHash('sha256')
        .update(await readFile(full))
        .digest('hex');
      entries.push({ path, type: 'file', mode: stat.mode & 0o7777, content });
    }
  }
  return entries;
}

async function makeTree(root: string): Promise<void> {
  await mkdir(join(root, 'bin'), { recursive: true });
  await mkdir(join(root, 'nested/deep/er'), { recursive: true });
  await mkdir(join(root, 'empty'), { recursive: true });
  await mkdir(join(root, 'private'), { recursive: true });
  await writeFile(join(root, 'a.txt'), 'hello, archive\n');
  await writeFile(join(root, 'bin/run.sh'), '#!/bin/sh\necho run\n');
  await writeFile(join(root, 'private/secret.bin'), randomBytes(150_000)); // incompressible: several chunks
  await writeFile(join(root, 'nested/deep/er/log.txt'), 'line of a log file\n'.repeat(20_000));
  await writeFile(join(root, 'nested/zero'), '');
  await writeFile(join(root, 'name with spaces & ünïcode.txt'), 'x');
  await symlink('a.txt', join(root, 'link-to-a'));
  await chmod(join(root, 'a.txt'), 0o644);
  await chmod(join(root, 'bin/run.sh'), 0o755);
  await chmod(join(root, 'private/secret.bin'), 0o600);
  await chmod(join(root, 'nested/zero'), 0o640);
  await chmod(join(root, 'private'), 0o700);
  await chmod(join(root, 'empty'), 0o750);
}

describe('pipeline with the standard tools', () => {
  let source: string;
  let expected: Entry[];

  before(async () => {
    source = join(dir, 'tree');
    await mkdir(source);
    await makeTree(source);
    expected = await walk(source);
    assert.ok(expected.length >= 12);
  });

  const tarCreate = (): [string, string[]] => ['tar', ['--format=posix', '-cf', '-', '-C', source, '.']];

  toolTest(
    'tar | zstd -3 | age -r, then ours, zstd -d and tar -x reproduce the tree',
    ['tar', 'zstd', 'age'],
    async () => {
      const sealed = await chain([
        tarCreate(),
        ['zstd', ['-3', '-q', '-c']],
        ['age', ['-r', key.ageRecipient]],
      ]);
      const compressed = await decrypt([key], sealed);
      const target = join(dir, 'restore-from-age');
      await mkdir(target);
      await chain(
        [
          ['zstd', ['-d', '-q', '-c']],
          ['tar', ['-xpf', '-', '-C', target]],
        ],
        compressed,
      );
      assert.deepEqual(await walk(target), expected);
    },
  );

  async function oursThenAge(label: string, compress: () => Transform | ChildProcessWithoutNullStreams) {
    const path = join(dir, `${label}.tar.zst`);
    const tar = spawn(tarCreate()[0], tarCreate()[1], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tarStderr: Buffer[] = [];
    tar.stderr.on('data', (chunk: Buffer) => tarStderr.push(chunk));
    const tarExit = new Promise<number | null>((resolve) => tar.on('close', resolve));
    const compressor = compress();
    if ('stdin' in compressor) {
      const zstdExit = collect(compressor, false);
      tar.stdout.pipe(compressor.stdin);
      await sealFile(key.publicKey, compressor.stdout, path);
      assert.equal((await zstdExit).code, 0);
    } else {
      await sealFile(key.publicKey, tar.stdout.pipe(compressor), path);
    }
    assert.equal(await tarExit, 0, Buffer.concat(tarStderr).toString());
    const target = join(dir, `restore-${label}`);
    await mkdir(target);
    await chain([
      ['age', ['-d', '-i', keyFile, path]],
      ['zstd', ['-d', '-q', '-c']],
      ['tar', ['-xpf', '-', '-C', target]],
    ]);
    assert.deepEqual(await walk(target), expected);
  }

  toolTest(
    'ours over tar | zstd -3, then age -d -i | zstd -d | tar -x reproduce the tree',
    ['tar', 'zstd', 'age'],
    async () => {
      await oursThenAge('zstd-program', () => spawn('zstd', ['-3', '-q', '-c']));
    },
  );

  toolTest(
    'ours over tar | zlib zstd level 3 (as the Scout does), then age | zstd -d | tar -x',
    ['tar', 'zstd', 'age'],
    async () => {
      await oursThenAge('zstd-zlib', () =>
        createZstdCompress({ params: { [zlibConstants.ZSTD_c_compressionLevel]: 3 } }),
      );
    },
  );
});
