// Bech32 (BIP 173, not bech32m) as age uses it for `age1…` recipients and `AGE-SECRET-KEY-1…`
// identities: the BIP 173 test vectors, round trips, padding rules and checksum coverage.
// The age spec (c2sp.org/age) takes Bech32 "as specified in BIP173, but without length limits
// on the data part", so the 90-character limit vector is replaced by a long round trip.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { bech32Decode, bech32Encode } from '../../src/shared/bech32.ts';

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

// An independent checksum (BIP 173 reference) to craft strings with chosen 5-bit words.
function polymod(values: number[]): number {
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const top = chk >>> 25;
    chk = (((chk & 0x1ffffff) << 5) ^ value) >>> 0;
    generators.forEach((g, i) => {
      if ((top >>> i) & 1) chk = (chk ^ g) >>> 0;
    });
  }
  return chk;
}

function withChecksum(hrp: string, words: number[], constant = 1): string {
  const expanded = [...hrp].map((c) => c.charCodeAt(0));
  const values = [...expanded.map((c) => c >>> 5), 0, ...expanded.map((c) => c & 31), ...words];
  const mod = polymod([...values, 0, 0, 0, 0, 0, 0]) ^ constant;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}

describe('BIP 173 test vectors', () => {
  const valid: [string, string, string][] = [
    // [string, hrp, data as hex]
    ['A12UEL5L', 'a', ''],
    ['a12uel5l', 'a', ''],
    [
      'an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs',
      'an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio',
      '',
    ],
    ['abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw', 'abcdef', '00443214c74254b635cf84653a56d7c675be77df'],
    [`11${'q'.repeat(82)}c8247j`, '1', '00'.repeat(51)],
    [
      'split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w',
      'split',
      'c5f38b70305f519bf66d85fb6cf03058f3dde463ecd7918f2dc743918f2d',
    ],
    ['?1ezyfcl', '?', ''],
  ];

  for (const [text, hrp, hex] of valid) {
    test(`valid: ${text}`, () => {
      const decoded = bech32Decode(text);
      assert.equal(decoded.hrp.toLowerCase(), hrp);
      assert.equal(Buffer.from(decoded.data).toString('hex'), hex);
      assert.equal(bech32Encode(hrp, decoded.data), text.toLowerCase());
    });
  }

  const invalid: [string, string][] = [
    ['\x201nwldj5', 'HRP character out of range (space)'],
    ['\x7f1axkwrx', 'HRP character out of range (DEL)'],
    ['\x801eym55h', 'HRP character out of range (0x80)'],
    ['pzry9x0s0muk', 'no separator character'],
    ['1pzry9x0s0muk', 'empty HRP'],
    ['x1b4n0q5v', 'invalid data character'],
    ['li1dgmt3', 'too short checksum'],
    ['de1lg7wt\xff', 'invalid character in checksum'],
    ['A1G7SGD8', 'checksum calculated with the uppercase form of the HRP'],
    ['10a06t8', 'empty HRP'],
    ['1qzzfhee', 'empty HRP'],
    ['a12UEL5L', 'mixed case'],
    ['A12uEL5L', 'mixed case'],
  ];

  for (const [text, reason] of invalid) {
    const shown = text.replace(/[^\x21-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    test(`invalid (${reason}): ${shown}`, () => {
      assert.throws(() => bech32Decode(text), Error);
    });
  }
});

describe('encode and decode', () => {
  test('round trips for every data length from 0 to 80 bytes and the age HRPs', () => {
    for (let length = 0; length <= 80; length += 1) {
      for (const hrp of ['age', 'age-secret-key-', 'a', 'age-plugin-yubikey-']) {
        const data = randomBytes(length);
        const text = bech32Encode(hrp, data);
        assert.match(text, new RegExp(`^${hrp}1[${CHARSET}]{${Math.ceil((length * 8) / 5) + 6}}$`));
        for (const form of [text, text.toUpperCase()]) {
          const decoded = bech32Decode(form);
          assert.equal(decoded.hrp.toLowerCase(), hrp);
          assert.deepEqual(Buffer.from(decoded.data), data);
        }
      }
    }
  });

  test('an uppercase HRP encodes in lowercase with the lowercase checksum', () => {
    const data = randomBytes(32);
    const text = bech32Encode('AGE-SECRET-KEY-', data);
    assert.equal(text, bech32Encode('age-secret-key-', data));
    assert.ok(text.startsWith('age-secret-key-1'));
    assert.deepEqual(Buffer.from(bech32Decode(text.toUpperCase()).data), data);
  });

  test('no length limit on the data part (age spec): 1000 bytes round trip', () => {
    const data = randomBytes(1000);
    const text = bech32Encode('age1pq', data);
    assert.ok(text.length > 90);
    assert.deepEqual(Buffer.from(bech32Decode(text).data), data);
  });

  test('matches an independent encoder', () => {
    for (const length of [0, 1, 20, 32, 33]) {
      const data = randomBytes(length);
      const words: number[] = [];
      let acc = 0;
      let bits = 0;
      for (const byte of data) {
        acc = ((acc << 8) | byte) & 0xfff;
        bits += 8;
        while (bits >= 5) {
          bits -= 5;
          words.push((acc >>> bits) & 31);
        }
      }
      if (bits > 0) words.push((acc << (5 - bits)) & 31);
      assert.equal(bech32Encode('age', data), withChecksum('age', words));
    }
  });

  test('the spec sample recipient decodes to 32 bytes', () => {
    const { hrp, data } = bech32Decode('age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj');
    assert.equal(hrp, 'age');
    assert.equal(data.length, 32);
  });
});

describe('refusals', () => {
  test('non-zero padding bits and a whole surplus word are refused', () => {
    // One byte is 8 bits: two words carry 10, so 2 padding bits that must be zero.
    assert.deepEqual([...bech32Decode(withChecksum('age', [0b11111, 0b11100])).data], [0xff]);
    assert.throws(() => bech32Decode(withChecksum('age', [0b11111, 0b11101])), Error, 'non-zero padding');
    assert.throws(() => bech32Decode(withChecksum('age', [0b11111, 0b11110])), Error, 'non-zero padding');
    // Three words for one byte: 7 surplus bits, a whole surplus word.
    assert.throws(() => bech32Decode(withChecksum('age', [0b11111, 0b11100, 0])), Error, 'surplus word');
  });

  test('bech32m checksums are not bech32', () => {
    assert.throws(() => bech32Decode(withChecksum('a', [], 0x2bc830a3)), Error);
    assert.throws(() => bech32Decode('a1lqfn3a'), Error);
    assert.throws(() => bech32Decode(withChecksum('age', [1, 2, 3, 4], 0x2bc830a3)), Error);
  });

  test('every single-character substitution in a recipient is detected', () => {
    const text = bech32Encode('age', randomBytes(32));
    const undetected: string[] = [];
    for (let at = 4; at < text.length; at += 1) {
      for (const ch of CHARSET) {
        if (ch === text[at]) continue;
        const changed = `${text.slice(0, at)}${ch}${text.slice(at + 1)}`;
        try {
          bech32Decode(changed);
          undetected.push(changed);
        } catch {
          // detected
        }
      }
    }
    assert.deepEqual(undetected, []);
  });

  test('a changed HRP, a swapped pair and a dropped character are detected', () => {
    const text = bech32Encode('age', randomBytes(32));
    assert.throws(() => bech32Decode(`agf${text.slice(3)}`), Error);
    const i = [...text].findIndex((ch, j) => j > 4 && ch !== text[j + 1]);
    const swapped = `${text.slice(0, i)}${text[i + 1]}${text[i]}${text.slice(i + 2)}`;
    assert.throws(() => bech32Decode(swapped), Error);
    assert.throws(() => bech32Decode(`${text.slice(0, 10)}${text.slice(11)}`), Error);
    assert.throws(() => bech32Decode(`${text}q`), Error);
    assert.throws(() => bech32Decode(''), Error);
    assert.throws(() => bech32Decode('age1'), Error);
    assert.throws(
      () => bech32Decode(`${text.slice(0, 12)}b${text.slice(13)}`),
      Error,
      'b is not in the charset',
    );
  });
});
