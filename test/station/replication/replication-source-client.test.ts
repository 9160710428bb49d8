// The replica's client of a primary Station: a hostile primary's refusal is read only as far as
// its first 64 KiB (its `detail` still reaches the error), however much it sends.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createSourceClient } from '../../../src/station/replication/source-client.ts';

const MIB = 1024 * 1024;
let server: Server;
let base = '';
/** Bytes the server managed to send of each endless refusal before the client hung up. */
const sent: number[] = [];

before(async () => {
  server = createServer((req, res) => {
    if (req.url?.includes('detail')) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'token revoked' }));
      return;
    }
    // An endless refusal: 1 MiB pieces until the client goes away.
    res.writeHead(500, { 'content-type': 'application/json' });
    let bytes = 0;
    const piece = Buffer.alloc(MIB, 0x20);
    const more = () => {
      while (!res.destroyed && bytes < 4096 * MIB) {
        bytes += MIB;
        if (!res.write(piece)) return void res.once('drain', more);
      }
    };
    res.on('close', () => sent.push(bytes));
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => server.close());

const snapshot = (job: string) => ({
  scout_id: 'host',
  scout_instance_id: 'inst',
  job_name: job,
  filename: '2026-01-01T000000Z_fp.tar.zst.age',
  size_bytes: 100,
  sha256: '0'.repeat(64),
});

test('a refusal names the primary detail and the status', async () => {
  const client = createSourceClient(base, 'secret-token');
  await assert.rejects(client.piece(snapshot('detail') as never, 0, 99), (error: Error) => {
    assert.match(error.message, /answered 403 to the download of .*: token revoked/);
    assert.doesNotMatch(error.message, /secret-token/);
    return true;
  });
});

test('an endless refusal is not read to its end: the download and the listing fail at once', async () => {
  const client = createSourceClient(base, 'secret-token');
  await assert.rejects(client.piece(snapshot('endless') as never, 0, 99), /answered 500 to the download/);
  await assert.rejects(client.list(), /answered 500 to the snapshot listing/);
  // The server sees each hang-up a moment later (a bound only against a hang).
  for (let waited = 0; sent.length < 2 && waited < 30_000; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(sent.length, 2, 'both refusals were hung up on');
  for (const bytes of sent) assert.ok(bytes < 1024 * MIB, `${bytes / MIB} MiB sent before the client left`);
});
