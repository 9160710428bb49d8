// A plain-HTTP reverse proxy between a Scout and a Station for upload tests: it can hold chunk
// bytes part-way (so a test knows an upload is in flight, without timing anything), and can
// answer a streamed initiation 400 as a Station from before the extension does.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardRequest } from './tls-proxy.ts';

export interface UploadProxy {
  url: string;
  /** Answer `streamed: true` initiations 400 (archive_size_bytes missing), as an older Station. */
  refuseStreamed: boolean;
  /** Initiation bodies that reached the proxy, oldest first. */
  initiations: Record<string, unknown>[];
  /**
   * Stops forwarding chunk bytes once `bytes` more have gone through; resolves when it holds
   * (the upload is then in flight and cannot finish until `release`).
   */
  holdAfter(bytes: number): Promise<void>;
  /** Forwards again what was held, and everything after. */
  release(): void;
  close(): Promise<void>;
}

const OLD_STATION_REFUSAL = JSON.stringify({
  detail: 'archive_size_bytes: archive_size_bytes must be a whole number',
  code: 'bad_request',
});

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export async function startUploadProxy(target: string): Promise<UploadProxy> {
  const upstream = new URL(target);
  let budget = Number.POSITIVE_INFINITY;
  let holding: (() => void) | null = null;
  const held: IncomingMessage[] = [];

  const forward = (req: IncomingMessage, res: import('node:http').ServerResponse, body?: Buffer) => {
    const out = forwardRequest(upstream, req, res);
    out.on('error', () => res.destroy());
    req.on('error', () => out.destroy());
    // The client went away (killed) before its body ended: so does the request upstream.
    req.on('close', () => {
      if (!req.complete) out.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    if (body) {
      out.end(body);
      return;
    }
    req.on('data', (piece: Buffer) => {
      if (budget === Number.POSITIVE_INFINITY || piece.length < budget) {
        budget -= piece.length;
        out.write(piece);
        return;
      }
      out.write(piece.subarray(0, budget));
      const rest = piece.subarray(budget);
      budget = 0;
      req.pause();
      held.push(req);
      req.once('resume', () => out.write(rest));
      holding?.();
      holding = null;
    });
    req.on('end', () => out.end());
  };

  const proxy: UploadProxy = {
    url: '',
    refuseStreamed: false,
    initiations: [],
    holdAfter(bytes) {
      budget = bytes;
      return new Promise((resolve) => {
        holding = resolve;
      });
    },
    release() {
      budget = Number.POSITIVE_INFINITY;
      for (const req of held.splice(0)) req.resume();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer(async (req, res) => {
    if (req.method === 'POST' && req.url === '/backup/uploads/initiate') {
      const body = await bodyOf(req);
      const meta = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      proxy.initiations.push(meta);
      if (proxy.refuseStreamed && meta.streamed === true && meta.archive_size_bytes === undefined) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(OLD_STATION_REFUSAL);
        return;
      }
      forward(req, res, body);
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
