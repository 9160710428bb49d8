import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeName, unescapeName } from '../../src/shared/byte-names.ts';

test('plain UTF-8 names are shown as they are', () => {
  for (const name of ['report.txt', 'café', 'cafe\u0301', 'line\nbreak', '日本語', '🙂']) {
    assert.equal(escapeName(Buffer.from(name)), name);
    assert.deepEqual(unescapeName(name), Buffer.from(name));
  }
});

test('bytes that are not UTF-8 become \\xHH and a backslash \\\\, losslessly', () => {
  const latin1 = Buffer.from('latin1-caf\xe9.txt', 'latin1');
  assert.equal(escapeName(latin1), 'latin1-caf\\xe9.txt');
  assert.equal(escapeName(Buffer.from('a\\b')), 'a\\\\b');
  assert.equal(escapeName(Buffer.of(0xc3)), '\\xc3', 'a cut sequence');
  assert.equal(escapeName(Buffer.of(0xed, 0xa0, 0x80)), '\\xed\\xa0\\x80', 'an encoded surrogate');
  assert.equal(escapeName(Buffer.of(0xc0, 0xaf)), '\\xc0\\xaf', 'an overlong form');
  assert.equal(escapeName(Buffer.from([0xff, ...Buffer.from('é'), 0x5c])), '\\xffé\\\\');
});

test('every byte string survives escape and unescape', () => {
  for (let seed = 0; seed < 2000; seed += 1) {
    const bytes = Buffer.from(
      Array.from({ length: 1 + (seed % 12) }, (_, i) => (seed * 131 + i * 977) % 256),
    );
    assert.deepEqual(unescapeName(escapeName(bytes)), bytes);
  }
});

test('a backslash that starts no escape is refused', () => {
  assert.throws(() => unescapeName('bad\\q'), /starts no escape/);
  assert.throws(() => unescapeName('cut\\x4'), /starts no escape/);
});
