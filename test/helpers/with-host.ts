// Requests with a chosen Host header (fetch does not let us set one), for the host checks.
import { request } from 'node:http';
import type { TestServer } from './server.ts';

export interface RawReply {
  status: number;
  text: string;
  contentType: string;
  setCookie: string[];
}

/** `method path` on the server's port with `Host: host`, other headers and an optional JSON body. */
export function withHost(
  server: TestServer,
  host: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string | number> = { host, ...options.headers };
    if (payload)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text,
          contentType: res.headers['content-type'] ?? '',
          setCookie: res.headers['set-cookie'] ?? [],
        }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}
