// Request bodies are bounded on the bytes as they arrive: JSON over 1 MiB and multipart over
// 10 MiB are 413, whether the body is chunked (no Content-Length) or its Content-Length lies,
// and the server never holds more than the limit. A 300 MB body is streamed at the public
// sign-in of a Station and the public restore hint of a Scout while the server's resident
// memory (VmRSS) is watched.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminClient, Client } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const MIB = 1024 * 1024;
const HUGE = 300 * MIB;
/** Streaming 300 MB into a server that reads it whole grew its RSS by ~800 MB. */
const MAX_GROWTH = 100 * MIB;

let station: TestServer;
let scout: TestServer;

before(async () => {
  // Both start at once; if one fails, the other is still stopped by after().
  const [s, c] = await Promise.allSettled([startServer('station'), startServer('scout')]);
  if (s.status === 'fulfilled') station = s.value;
  if (c.status === 'fulfilled') scout = c.value;
  for (const r of [s, c]) if (r.status === 'rejected') throw r.reason;
});

after(async () => {
  await Promise.all([station?.dispose(), scout?.dispose()]);
});

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  assert.ok(kib, `no VmRSS in /proc/${pid}/status`);
  return Number(kib) * 1024;
}

interface Sent {
  status: number;
  text: string;
  /** Bytes written before the server answered or closed the connection. */
  written: number;
  /** Highest VmRSS of the server seen while sending, and before sending. */
  peakRss: number;
  rssBefore: number;
}

/**
 * Streams `total` bytes (`head`, then filler) at `path` from a 1 MiB buffer reused for every
 * write: chunked, or with a given (possibly lying) Content-Length. Stops writing as soon as
 * the answer arrives or the connection ends.
 */
function stream(
  server: TestServer,
  path: string,
  options: {
    total: number;
    head?: string;
    tail?: string;
    contentType: string;
    contentLength?: number;
    cookie?: string;
  },
): Promise<Sent> {
  const rssBefore = rssBytes(server.pid);
  let peakRss = rssBefore;
  const watch = setInterval(() => {
    peakRss = Math.max(peakRss, rssBytes(server.pid));
  }, 20);
  const filler = Buffer.alloc(MIB, 'a');
  const headers: Record<string, string> = { 'content-type': options.contentType };
  if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
  if (options.cookie) headers.cookie = options.cookie;
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    let finished = false;
    const done = (status: number, text: string) => {
      if (finished) return;
      finished = true;
      clearInterval(watch);
      peakRss = Math.max(peakRss, rssBytes(server.pid));
      req.destroy();
      resolve({ status, text, written, peakRss, rssBefore });
    };
    const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path, headers }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => done(res.statusCode ?? 0, text));
      res.on('error', () => done(res.statusCode ?? 0, text));
    });
    req.on('error', (error) => {
      // The server may close the connection after its answer; wait a moment for the answer.
      setTimeout(() => {
        if (!answered && !finished) {
          finished = true;
          clearInterval(watch);
          reject(new Error(`no answer after ${written} bytes: ${error.message}`));
        }
      }, 1_000);
    });
    const pump = () => {
      while (!answered && !req.destroyed) {
        if (written === 0 && options.head) {
          written += Buffer.byteLength(options.head);
          if (!req.write(options.head)) return void req.once('drain', pump);
          continue;
        }
        const left = options.total - written - Buffer.byteLength(options.tail ?? '');
        if (left <= 0) {
          req.end(options.tail ?? '');
          return;
        }
        const chunk = left >= MIB ? filler : filler.subarray(0, left);
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
    };
    pump();
  });
}

/**
 * Like `stream` with a Content-Length that lies (smaller than what follows), over a raw socket:
 * Node's own client refuses to send more than it declared. Resolves with the first answer.
 */
function lyingStream(server: TestServer, path: string, head: string, declared: number): Promise<Sent> {
  const rssBefore = rssBytes(server.pid);
  let peakRss = rssBefore;
  const watch = setInterval(() => {
    peakRss = Math.max(peakRss, rssBytes(server.pid));
  }, 20);
  const filler = Buffer.alloc(MIB, 'a');
  return new Promise((resolve) => {
    let written = 0;
    let reply = '';
    const socket = connect(server.port, '127.0.0.1');
    const finish = () => {
      clearInterval(watch);
      peakRss = Math.max(peakRss, rssBytes(server.pid));
      socket.destroy();
      // 0: the connection was reset before its answer could be read (the server closes a
      // connection whose next "request" is filler, and unread bytes make that a reset).
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0);
      const body = reply.slice(reply.indexOf('\r\n\r\n') + 4).split('HTTP/1.1 ')[0] ?? '';
      resolve({ status, text: body, written, peakRss, rssBefore });
    };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      reply += d;
    });
    socket.on('close', finish);
    socket.on('error', () => {});
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n${head}`,
    );
    written = Buffer.byteLength(head);
    const pump = () => {
      while (reply === '' && !socket.destroyed && written < HUGE) {
        written += filler.length;
        if (!socket.write(filler)) return void socket.once('drain', pump);
      }
      // Answered (or everything sent): give the server a moment to close, then read what came.
      setTimeout(() => socket.end(), 500);
    };
    pump();
  });
}

function report(label: string, sent: Sent): void {
  const mib = (n: number) => (n / MIB).toFixed(1);
  process.stdout.write(
    `# ${label}: ${sent.status} after ${mib(sent.written)} MiB sent; server RSS ${mib(sent.rssBefore)} → peak ${mib(sent.peakRss)} MiB\n`,
  );
}

function assertRefused(label: string, sent: Sent, status = 413): void {
  report(label, sent);
  assert.equal(sent.status, status, sent.text);
  if (status === 413) assert.match(JSON.parse(sent.text).detail, /larger than \d+ MiB/);
  assert.ok(
    sent.peakRss - sent.rssBefore < MAX_GROWTH,
    `${label}: server RSS grew by ${(sent.peakRss - sent.rssBefore) / MIB} MiB`,
  );
}

describe('JSON bodies', () => {
  test('a chunked 300 MB sign-in body is 413 and the Station holds none of it', async () => {
    const sent = await stream(station, '/api/session/login', {
      total: HUGE,
      head: '{"username":"admin","password":"',
      contentType: 'application/json',
    });
    assertRefused('Station sign-in, chunked', sent);
    assert.ok(sent.written < HUGE, 'the answer came before the body ended');
  });

  test('a 300 MB sign-in body behind a small lying Content-Length is refused without being read', async () => {
    // The server takes the first 100 bytes as the body (not JSON: 400); the rest is no
    // valid next request, so the connection ends. Nothing of the 300 MB is held.
    const sent = await lyingStream(station, '/api/session/login', '{"username":"admin","password":"', 100);
    report('Station sign-in, Content-Length 100', sent);
    if (sent.status !== 0) assert.equal(sent.status, 400, sent.text);
    assert.ok(sent.written < HUGE, 'the connection ended before the 300 MB did');
    assert.ok(
      sent.peakRss - sent.rssBefore < MAX_GROWTH,
      `server RSS grew by ${sent.peakRss - sent.rssBefore}`,
    );
  });

  test('a declared Content-Length over 1 MiB is 413 before any byte is read', async () => {
    const sent = await stream(station, '/api/session/login', {
      total: HUGE,
      head: '{"username":"admin","password":"',
      contentType: 'application/json',
      contentLength: HUGE,
    });
    assertRefused('Station sign-in, Content-Length 300 MB', sent);
  });

  test('a chunked 300 MB restore hint is 413 and the Scout holds none of it', async () => {
    const sent = await stream(scout, '/backup/restore-notifications', {
      total: HUGE,
      head: '{"id":"',
      contentType: 'application/json',
    });
    assertRefused('Scout restore hint, chunked', sent);
  });

  test('1 MiB + 1 byte is 413; exactly 1 MiB is read and judged as JSON', async () => {
    const head = '{"username":"admin","password":"';
    const tail = '"}';
    const over = await stream(station, '/api/session/login', {
      total: MIB + 1,
      head,
      tail,
      contentType: 'application/json',
    });
    assertRefused('Station sign-in, 1 MiB + 1 chunked', over);
    const limit = await new Client(station.url).request('POST', '/api/session/login', undefined, {
      raw: head + 'a'.repeat(MIB - head.length - tail.length) + tail,
    });
    assert.notEqual(limit.status, 413, limit.text);
    assert.ok(limit.status === 400 || limit.status === 401, `${limit.status} ${limit.text}`);
  });

  test('the server keeps answering after refusing bodies', async () => {
    const hint = await new Client(scout.url).post('/backup/restore-notifications', { id: 'nothing-such' });
    assert.ok(hint.status < 500, `${hint.status} ${hint.text}`);
    assert.equal((await new Client(station.url).get('/health')).status, 200);
  });
});

describe('multipart bodies', () => {
  let cookie: string;

  before(async () => {
    cookie = (await adminClient(station.url)).cookieHeader();
  });

  const boundary = 'backupd-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="hook_file"; filename="big.sh"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const contentType = `multipart/form-data; boundary=${boundary}`;

  test('a chunked multipart body over 10 MiB is 413 without Content-Length', async () => {
    const sent = await stream(station, '/api/hooks/files', { total: HUGE, head, tail, contentType, cookie });
    assertRefused('Station hook file, chunked 300 MB', sent);
    assert.match(JSON.parse(sent.text).detail, /10 MiB/);
  });

  test('a 2 MiB file inside the 10 MiB envelope is 413 for the file', async () => {
    const sent = await stream(station, '/api/hooks/files', {
      total: 2 * MIB,
      head,
      tail,
      contentType,
      cookie,
    });
    report('Station hook file, chunked 2 MiB', sent);
    assert.equal(sent.status, 413, sent.text);
    assert.match(JSON.parse(sent.text).detail, /hook_file is larger than 1 MiB/);
  });

  test('a small file sent chunked is saved', async () => {
    const sent = await stream(station, '/api/hooks/files', {
      total: Buffer.byteLength(head) + 64 + Buffer.byteLength(tail),
      head,
      tail,
      contentType,
      cookie,
    });
    assert.equal(sent.status, 201, sent.text);
    assert.equal(JSON.parse(sent.text).filename, 'big.sh');
  });
});
