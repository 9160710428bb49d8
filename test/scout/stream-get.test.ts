// Snapshot downloads as node streams (src/scout/upload/stream-get.ts): a success streams its
// body piece by piece, a refusal is read whole into a Response, and the caller's signal stops
// a body mid-way.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { getStream } from '../../src/scout/upload/stream-get.ts';

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
