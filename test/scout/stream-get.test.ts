// Snapshot downloads as node streams (src/scout/upload/stream-get.ts): a success streams its
// body piece by piece, a refusal is read whole into a Response, and the caller's signal stops
// a body mid-way. A body of a declared length over 1 MiB is read from its socket straight into
// 1 MiB blocks (src/scout/upload/socket-body.ts): the same bytes, and a cut fails with a message.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { consumed } from '../../src/scout/restore/piece-pool.ts';
import { getStream } from '../../src/scout/upload/stream-get.ts';

const MiB = 1024 * 1024;
/** More than a few blocks, not a whole number of them. */
const BIG = randomBytes(5 * MiB + 12_345);

const PIECE = Buffer.alloc(64 * 1024, 7);
let server: Server;
let base = '';

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/refused') {
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'no' }));
      return;
    }
    if (req.url === '/big' || req.url === '/cut') {
      // In uneven pieces with pauses between; /cut drops the connection after 2.5 MiB of 5.
      res.writeHead(200, { 'content-length': String(BIG.length) });
      const end = req.url === '/cut' ? 2.5 * MiB : BIG.length;
      const send = async () => {
        for (let at = 0, n = 1; at < end; at += n, n = (n * 7 + 40_000) % 700_000) {
          res.write(BIG.subarray(at, Math.min(at + n, end)));
          await turn();
        }
        if (req.url === '/cut') res.socket?.destroy();
        else res.end();
      };
      void send();
      return;
    }
    if (req.url === '/endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const timer = setInterval(() => res.write(PIECE), 5);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, {
      'content-length': String(PIECE.length * 16),
      'x-seen-auth': req.headers.authorization ?? '',
    });
    for (let i = 0; i < 16; i += 1) res.write(PIECE);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

test('a success streams its body (node pieces, not one buffer) with its headers and the request headers sent', async () => {
  const answer = await getStream(`${base}/ok`, { authorization: 'Bearer t' }, new AbortController().signal);
  assert.equal(answer.response.status, 200);
  assert.equal(answer.response.headers.get('x-seen-auth'), 'Bearer t');
  assert.ok(answer.body);
  let bytes = 0;
  let pieces = 0;
  for await (const piece of answer.body) {
    bytes += (piece as Buffer).length;
    pieces += 1;
  }
  assert.equal(bytes, PIECE.length * 16);
  assert.ok(pieces > 1, 'it arrived as it came, in pieces');
});

test('a refusal is read whole into the Response (for the JSON detail) and has no stream', async () => {
  const answer = await getStream(`${base}/refused`, {}, new AbortController().signal);
  assert.equal(answer.response.status, 409);
  assert.equal(answer.body, null);
  assert.deepEqual(await answer.response.json(), { detail: 'no' });
});

test("the caller's signal stops a body mid-way", async () => {
  const stop = new AbortController();
  const answer = await getStream(`${base}/endless`, {}, stop.signal);
  assert.ok(answer.body);
  let bytes = 0;
  await assert.rejects(async () => {
    for await (const piece of answer.body as AsyncIterable<Buffer>) {
      bytes += piece.length;
      if (bytes >= PIECE.length * 4) stop.abort();
    }
  }, /abort/i);
});

test('a body over 1 MiB of a declared length arrives in 1 MiB blocks that go back to their pool, unchanged', async () => {
  const answer = await getStream(`${base}/big`, {}, new AbortController().signal);
  assert.equal(answer.response.status, 200);
  assert.ok(answer.body);
  const got: Buffer[] = [];
  for await (const piece of answer.body as AsyncIterable<Buffer>) {
    got.push(Buffer.from(piece));
    assert.ok(consumed(piece), "a pool's block, given back once read");
  }
  assert.deepEqual(
    got.map((piece) => piece.length),
    [MiB, MiB, MiB, MiB, MiB, 12_345],
  );
  assert.ok(Buffer.concat(got).equals(BIG), 'the same bytes in the same order');
});

test('a download whose connection drops mid-body fails with a message naming how far it got', async () => {
  const answer = await getStream(`${base}/cut`, {}, new AbortController().signal);
  assert.ok(answer.body);
  let bytes = 0;
  await assert.rejects(
    async () => {
      for await (const piece of answer.body as AsyncIterable<Buffer>) bytes += piece.length;
    },
    {
      message: `the Station's answer stopped after ${2.5 * MiB} of ${BIG.length} bytes: the connection closed before the end of the body`,
    },
  );
  assert.equal(bytes, 2 * MiB, 'the whole blocks before the cut were passed on, nothing after');
});

test("the caller's signal stops a body read from its socket, with the signal's reason", async () => {
  const stop = new AbortController();
  const answer = await getStream(`${base}/big`, {}, stop.signal);
  assert.ok(answer.body);
  await assert.rejects(async () => {
    for await (const _ of answer.body as AsyncIterable<Buffer>) stop.abort();
  }, /abort/i);
});
