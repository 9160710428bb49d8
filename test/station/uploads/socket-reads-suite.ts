// A chunk body over 1 MiB with a declared length is read from its socket straight into the disk
// store's blocks (src/station/storage/socket-reads.ts): stored exactly whatever pieces and
// pauses it arrives in, its answer closes the connection, a client cut off keeps what arrived,
// a body past the archive's size keeps nothing and still gets its 400, and a SIGKILL while a
// stalled chunk waits resumes from the bytes in the file. Runs on PGlite and on PostgreSQL
// (there the upload lease checks each read).
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { statSync } from 'node:fs';
import { Agent, type ClientRequest, type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { uploadPaths } from '../../../src/shared/protocol/paths.ts';
import { lapseUploadLeases } from '../../helpers/postgres.ts';
import { diskOnly } from '../../helpers/station-store.ts';
import { finalize, initiate } from '../../helpers/uploads.ts';
import { assertOk, assertStoredWhole, HUGE_LIMIT, type StartStation, useStation } from './uploads-kit.ts';

const MIB = 1024 * 1024;

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: ReturnType<typeof JSON.parse>;
}

/**
 * A chunk PUT with a declared Content-Length, as the Scout sends it (src/scout/upload/file-put.ts).
 * `send` writes the body (or part of it) and may pause; the reply is the Station's answer.
 */
function rawChunk(
  url: string,
  token: string,
  uploadId: string,
  offset: number,
  declared: number,
  send: (req: ClientRequest) => Promise<void>,
  agent?: Agent,
): { reply: Promise<RawReply>; req: ClientRequest } {
  const target = new URL(`${url}${uploadPaths.chunk(uploadId, offset)}`);
  let req!: ClientRequest;
  const reply = new Promise<RawReply>((resolve, reject) => {
    req = request(
      target,
      {
        method: 'PUT',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/octet-stream',
          'content-length': String(declared),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(parts).toString();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? JSON.parse(text) : null,
          });
        });
      },
    );
    req.on('error', reject);
  });
  send(req).catch(() => req.destroy());
  return { reply, req };
}

const write = (req: ClientRequest, bytes: Buffer) =>
  new Promise<void>((resolve, reject) => req.write(bytes, (error) => (error ? reject(error) : resolve())));

/** Writes `bytes` in pieces of random sizes, now and then letting the Station catch up. */
async function inPieces(req: ClientRequest, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const size = Math.min(bytes.length - at, randomInt(1, 300_000));
    await write(req, bytes.subarray(at, at + size));
    at += size;
    if (randomInt(0, 8) === 0) await sleep(randomInt(0, 150));
  }
}

export function socketReadsSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'reads', { MAX_UPLOAD_BYTES: HUGE_LIMIT });
    let token: string;
    const at = { scout: 'reads-scout', instance: 'reads00000000001', job: 'big' };
    /** Initiates an upload of `data` for `job`. */
    async function begin(data: Buffer, job: string) {
      const meta = ctx.meta(data, { scout_id: at.scout, scout_instance_id: at.instance, job_name: job });
      const started = await initiate(ctx.station.url, token, meta);
      assertOk(started);
      return { meta, id: started.body.upload_id as string, job };
    }

    /** Finalizes and checks the snapshot holds exactly `data`. */
    async function storedWhole(upload: Awaited<ReturnType<typeof begin>>, data: Buffer) {
      const reply = await finalize(ctx.station.url, token, upload.id);
      await assertStoredWhole(ctx.station, reply, upload.meta, { ...at, job: upload.job }, data);
    }

    before(async () => {
      token = (await ctx.mint()).credential;
    });

    test('chunks over 1 MiB in any pieces and pauses are stored exactly; each answer closes its connection', async () => {
      const data = randomBytes(6 * MIB + 12_345);
      const upload = await begin(data, 'big');
      const { id } = upload;
      const agent = new Agent({ keepAlive: true });
      try {
        let offset = 0;
        for (const size of [2 * MIB + 777, 3 * MIB, 1 * MIB + 1]) {
          const bytes = data.subarray(offset, offset + size);
          const sent = rawChunk(
            ctx.station.url,
            token,
            id,
            offset,
            bytes.length,
            async (req) => {
              await inPieces(req, bytes);
              req.end();
            },
            agent,
          );
          const reply = await sent.reply;
          assertOk({ status: reply.status, body: reply.body });
          assert.equal(reply.body.next_offset, offset + size);
          assert.equal(reply.headers.connection, 'close', 'the socket was read past the HTTP parser');
          offset += size;
        }
        // The rest, under 1 MiB, the ordinary way: the connection stays.
        const rest = data.subarray(offset);
        const small = rawChunk(
          ctx.station.url,
          token,
          id,
          offset,
          rest.length,
          async (req) => {
            req.end(rest);
          },
          agent,
        );
        const reply = await small.reply;
        assertOk({ status: reply.status, body: reply.body });
        assert.equal(reply.body.status, 'complete');
        assert.notEqual(reply.headers.connection, 'close');
      } finally {
        agent.destroy();
      }
      await storedWhole(upload, data);
    });

    test('a client cut off mid-body keeps what arrived; the upload resumes from there', async () => {
      const data = randomBytes(4 * MIB);
      const upload = await begin(data, 'cut');
      const { id } = upload;
      const sentBytes = 1.5 * MIB;
      const cut = rawChunk(ctx.station.url, token, id, 0, data.length, async (req) => {
        await inPieces(req, data.subarray(0, sentBytes));
        req.socket?.end();
      });
      await cut.reply.catch(() => null);
      // Offset 0 again: the Station answers where the bytes stopped (once the cut chunk is done).
      const probe = rawChunk(ctx.station.url, token, id, 0, 2 * MIB, async (req) => {
        req.end(data.subarray(0, 2 * MIB));
      });
      const mismatch = await probe.reply;
      assert.equal(mismatch.status, 409, JSON.stringify(mismatch.body));
      assert.equal(
        mismatch.body.detail.next_offset,
        sentBytes,
        'every byte that arrived was kept, none more',
      );
      const rest = rawChunk(ctx.station.url, token, id, sentBytes, data.length - sentBytes, async (req) => {
        await inPieces(req, data.subarray(sentBytes));
        req.end();
      });
      assertOk(await rest.reply);
      await storedWhole(upload, data);
    });

    test('a body over 1 MiB past archive_size_bytes is 400 (the client gets the answer) and keeps nothing', async () => {
      const data = randomBytes(2 * MIB);
      const upload = await begin(data, 'past');
      const { id } = upload;
      const long = Buffer.concat([data, randomBytes(MIB)]);
      const refused = await rawChunk(ctx.station.url, token, id, 0, long.length, async (req) => {
        await inPieces(req, long);
        req.end();
      }).reply;
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.detail, /past archive_size_bytes/);
      const whole = await rawChunk(ctx.station.url, token, id, 0, data.length, async (req) => {
        req.end(data);
      }).reply;
      assertOk(whole);
      assert.equal(whole.body.next_offset, data.length, 'nothing of the refused body was kept');
      await storedWhole(upload, data);
    });

    test('SIGKILL while a large chunk stalls: the bytes that arrived are in the file and the upload resumes from them', {
      skip: diskOnly('reads the staged file'),
    }, async () => {
      const data = randomBytes(5 * MIB);
      const upload = await begin(data, 'stall');
      const { id, meta } = upload;
      const first = 1.5 * MIB + 4321;
      const stalled = rawChunk(ctx.station.url, token, id, 0, data.length, async (req) => {
        await inPieces(req, data.subarray(0, first));
      });
      stalled.reply.catch(() => {});
      const staged = join(ctx.station.dataDir, 'staging', `${id}.part`);
      const size = () => {
        try {
          return statSync(staged).size;
        } catch {
          return 0;
        }
      };
      // A stalled body is written within IDLE_FLUSH_MS (write-batches.ts); wait for it (bounded).
      for (let i = 0; i < 300 && size() < first; i += 1) await sleep(20);
      assert.equal(size(), first, 'what arrived of the stalled chunk is in the staged file');
      await ctx.station.kill();
      stalled.req.destroy();
      ctx.station = await ctx.station.restart();
      // On PostgreSQL the killed Station held the upload's lease: end it instead of waiting a minute.
      await lapseUploadLeases(ctx.station);
      const again = await initiate(ctx.station.url, token, meta);
      assertOk(again);
      assert.equal(again.body.upload_id, id);
      assert.equal(again.body.next_offset, first);
      const rest = rawChunk(ctx.station.url, token, id, first, data.length - first, async (req) => {
        await inPieces(req, data.subarray(first));
        req.end();
      });
      assertOk(await rest.reply);
      await storedWhole(upload, data);
    });
  });
}
