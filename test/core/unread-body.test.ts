// An answer sent before a large request body arrived says `Connection: close`
// (src/core/http/unread-body.ts), on a real server and port: a client must not send its next
// request on a socket that still holds the refused body's bytes, and the close lingers so a
// client still writing reads the answer instead of a reset.

import assert from 'node:assert/strict';
import { type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, test } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { closeAfterUnreadBody } from '../../src/core/http/unread-body.ts';
import { eachPiece } from '../../src/station/storage/body-pieces.ts';

const app = new Hono();
app.use('*', closeAfterUnreadBody());
app.put('/refuse', (c) => c.json({ detail: 'refused before reading' }, 413));
// Reads the first piece, then lets the body go (destroyed, as an upload chunk that runs past its
// archive's size): Node stops reading the socket, so the rest of the body stays in it.
app.put('/let-go', async (c) => {
  const incoming = (c.env as { incoming: IncomingMessage }).incoming;
  await eachPiece(incoming, () => {
    throw new Error('runs past the archive');
  }).catch(() => undefined);
  return c.json({ detail: 'runs past the archive' }, 400);
});
app.put('/read', async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }));

let server: ReturnType<typeof serve>;
let port = 0;
before(async () => {
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      port = info.port;
      resolve();
    });
  });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** PUTs `size` bytes in 64 KiB writes; resolves with the answer's status and Connection header. */
function put(path: string, size: number): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'PUT', headers: { 'content-length': size } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      },
    );
    req.on('error', (error) =>
      (error as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(error),
    );
    const piece = Buffer.alloc(64 * 1024);
    let sent = 0;
    const more = () => {
      while (sent < size) {
        sent += piece.length;
        if (!req.write(piece.subarray(0, Math.min(piece.length, size - sent + piece.length)))) {
          req.once('drain', more);
          return;
        }
      }
      req.end();
    };
    more();
  });
}

test('an answer before a large body arrived closes the connection', async () => {
  const answer = await put('/refuse', 32 * 1024 * 1024);
  assert.equal(answer.status, 413);
  assert.equal(answer.connection, 'close');
});

test('an answer before a small body arrived closes the connection too', async () => {
  const answer = await put('/refuse', 512 * 1024);
  assert.equal(answer.status, 413);
  assert.equal(answer.connection, 'close');
});

test('an answer after the whole body was read keeps it open', async () => {
  const answer = await put('/read', 256 * 1024);
  assert.equal(answer.status, 200);
  assert.equal(answer.connection, 'keep-alive');
});

test('after a refusal the server goes on dropping what arrives, and closes when the client ends', async () => {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const failures: string[] = [];
  socket.on('error', (error) => failures.push(error.message));
  let answer = '';
  const answered = new Promise<void>((resolve) =>
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (answer.includes('refused before reading')) resolve();
    }),
  );
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`PUT /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: ${300 * 1024 * 1024}\r\n\r\n`);
  socket.write(Buffer.alloc(4 * 1024 * 1024));
  await answered;
  assert.match(answer, /^HTTP\/1\.1 413/);
  assert.match(answer, /connection: close/i);
  // A server that closed at once resets the connection when these bytes reach it.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const more = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < 8; i++) {
    await new Promise<void>((resolve) =>
      socket.write(more, (error) => {
        if (error) failures.push(error.message);
        resolve();
      }),
    );
  }
  socket.end();
  await closed;
  assert.deepEqual(failures, []);
});

test('after a body the route let go, the next request of a keep-alive client is answered', async () => {
  // fetch keeps connections for the next request unless the answer says close.
  const url = `http://127.0.0.1:${port}`;
  const refused = await fetch(`${url}/let-go`, { method: 'PUT', body: Buffer.alloc(200_000, 1) });
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get('connection'), 'close');
  await refused.arrayBuffer();
  const next = await fetch(`${url}/read`, { method: 'PUT', body: Buffer.alloc(1000) });
  assert.equal(next.status, 200);
  assert.deepEqual(await next.json(), { bytes: 1000 });
});
