import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { test } from 'node:test';
import { ResumableSha256 } from '../../../src/station/storage/resumable-sha256.ts';

const native = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

test('known answers (FIPS 180-4 examples)', () => {
  assert.equal(
    new ResumableSha256().digest(),
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  );
  assert.equal(
    new ResumableSha256().update(Buffer.from('abc')).digest(),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  );
  const twoBlocks = Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq');
  assert.equal(
    new ResumableSha256().update(twoBlocks).digest(),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
});

test('every length around the block and padding edges equals node:crypto', () => {
  const data = randomBytes(300);
  for (let length = 0; length <= 300; length += 1) {
    assert.equal(
      new ResumableSha256().update(data.subarray(0, length)).digest(),
      native(data.subarray(0, length)),
      `length ${length}`,
    );
  }
});

test('random splits, each piece saved and resumed in a new object, equal node:crypto', () => {
  for (let round = 0; round < 30; round += 1) {
    const data = randomBytes(randomInt(0, 200_000));
    let saved = new ResumableSha256().save();
    for (let at = 0; at < data.length; ) {
      const end = Math.min(data.length, at + randomInt(1, 20_000));
      const hash = ResumableSha256.resume(saved).update(data.subarray(at, end));
      assert.equal(hash.bytes, end);
      saved = hash.save();
      at = end;
    }
    const resumed = ResumableSha256.resume(saved);
    assert.equal(resumed.digest(), native(data));
    assert.equal(resumed.digest(), native(data), 'digest leaves the state as it was');
  }
});

test('a state that is not one is refused', () => {
  assert.throws(() => ResumableSha256.resume('bm90IGEgc3RhdGU='), /not a saved SHA-256 state/);
  const damaged = Buffer.from(new ResumableSha256().update(Buffer.from('abc')).save(), 'base64');
  damaged[40] = 9; // the byte count no longer matches the pending bytes
  assert.throws(() => ResumableSha256.resume(damaged.toString('base64')), /not a saved SHA-256 state/);
});
