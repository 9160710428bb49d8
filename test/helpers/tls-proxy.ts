// An HTTPS reverse proxy on 127.0.0.1 in front of a plain-HTTP test server, for tests of
// TLS with a private CA (certificates from pki.ts).
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { listenLocal } from './receiver.ts';

export interface TlsProxy {
  url: string;
  /** `METHOD /path` of every request that got through the TLS handshake, oldest first. */
  paths: string[];
  close(): Promise<void>;
}

/** An HTTPS reverse proxy to `target` (http), streaming bodies both ways; records requests. */
export async function startTlsProxy(target: string, cert: string, key: string): Promise<TlsProxy> {
  const upstream = new URL(target);
  const paths: string[] = [];
  const server = createHttpsServer({ cert, key }, (req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `proxy: ${error.message}` }));
    });
    req.pipe(forward);
  });
  const { port, close } = await listenLocal(server);
  return { url: `https://127.0.0.1:${port}`, paths, close };
}
