// An HTTPS reverse proxy on 127.0.0.1 in front of a plain-HTTP test server, for tests of
// TLS with a private CA (certificates from pki.ts).
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { listenLocal } from './receiver.ts';

export interface TlsProxy {
  url: string;
  /** `METHOD /path` of every request that got through the TLS handshake, oldest first. */
  paths: string[];
  close(): Promise<void>;
}

/**
 * Sends `req` (method, path, headers) on to `upstream` and its answer back as `res`; the caller
 * writes the body into the returned request and handles its errors (also upload-proxy.ts).
 */
export function forwardRequest(upstream: URL, req: IncomingMessage, res: ServerResponse): ClientRequest {
  const { method, url: path, headers } = req;
  return httpRequest({ host: upstream.hostname, port: upstream.port, method, path, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
}

/** An HTTPS reverse proxy to `target` (http), streaming bodies both ways; records requests. */
export async function startTlsProxy(target: string, cert: string, key: string): Promise<TlsProxy> {
  const upstream = new URL(target);
  const paths: string[] = [];
  const server = createHttpsServer({ cert, key }, (req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const forward = forwardRequest(upstream, req, res);
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `proxy: ${error.message}` }));
    });
    req.pipe(forward);
  });
  const { port, close } = await listenLocal(server);
  return { url: `https://127.0.0.1:${port}`, paths, close };
}
