// eachPiece (src/station/storage/body-pieces.ts), the way the disk store reads a chunk's body
// instead of `for await`: every piece in order, the body paused while a returned promise is
// pending, the body's failure reported only once that promise settled (so nothing writes after
// the caller moved on), and a refused piece ends the body.
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { eachPiece } from '../../../src/station/storage/body-pieces.ts';

const later = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('eachPiece', () => {
  test('hands every piece over in order; the body waits while a returned promise is pending', async () => {
    const pieces = Array.from({ length: 50 }, (_, i) => Buffer.alloc(1000 + i, i));
    const got: Buffer[] = [];
    let busy = false;
    await eachPiece(Readable.from(pieces), (piece) => {
      assert.equal(busy, false, 'no piece arrives while the previous one is being taken');
      got.push(piece);
      if (got.length % 3 !== 0) return undefined;
      busy = true;
      return later().then(() => {
        busy = false;
      });
    });
    assert.deepEqual(Buffer.concat(got), Buffer.concat(pieces));
  });

  test('a body that fails rejects only after the pending piece settled', async () => {
    const body = new PassThrough();
    const order: string[] = [];
    const done = eachPiece(body, () => {
      order.push('taken');
      body.destroy(new Error('client went away'));
      return later().then(() => {
        order.push('settled');
      });
    }).catch((error: Error) => {
      order.push(`rejected: ${error.message}`);
    });
    body.write(Buffer.alloc(10));
    await done;
    assert.deepEqual(order, ['taken', 'settled', 'rejected: client went away']);
  });

  test('a piece refused by throwing rejects with that error and destroys the body', async () => {
    const body = new PassThrough();
    const refused = new Error('runs past the archive');
    const done = eachPiece(body, () => {
      throw refused;
    });
    body.write(Buffer.alloc(10));
    await assert.rejects(done, (error) => error === refused);
    assert.equal(body.destroyed, true);
  });
});
