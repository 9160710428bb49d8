// Local HTTP stand-ins on 127.0.0.1 and a free port: a receiver that records every request
// (an ntfy server for notification tests), and the listen/close plumbing they share.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A server listening on 127.0.0.1. */
export interface Listening {
  port: number;
  /** Drops open connections and stops listening. */
  close(): Promise<void>;
}

/** Starts `server` (http or https) on 127.0.0.1 (or another local `host`) and a free port (or `port`). */
export async function listenLocal(
  server: Server | HttpsServer,
  host = '127.0.0.1',
  wanted = 0,
): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request a receiver got. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** Every request so far, oldest first. */
  messages: Received[];
  close(): Promise<void>;
}

/**
 * A local stand-in for an ntfy server (or a Scout): records every request and answers like ntfy. A topic
 * named "broken" (path `/broken`) answers 500, like a failing ntfy server.
 */
export async function startReceiver(host = '127.0.0.1', port = 0): Promise<Receiver> {
  const messages: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      messages.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const broken = req.url === '/broken';
      res.writeHead(broken ? 500 : 200, { 'content-type': 'application/json' });
      res.end(broken ? '{"error":"boom"}' : '{"id":"x","event":"message"}');
    });
  });
  const listening = await listenLocal(server, host, port);
  return { url: `http://${host}:${listening.port}`, messages, close: listening.close };
}

/** Lets fire-and-forget requests arrive for `ms`, then returns those received since `from`. */
export async function settle(receiver: Receiver, from: number, ms = 1000): Promise<Received[]> {
  await new Promise((r) => setTimeout(r, ms));
  return receiver.messages.slice(from);
}
