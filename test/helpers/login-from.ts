// POST /api/session/login from a chosen local (source) address, for tests of the sign-in
// limiter (test/core/sign-in-limit-suite.ts, test/station/several-stations/two-stations.postgres.test.ts):
// 127.0.0.0/8 all reach a server on 127.0.0.1, so each test can be a client address of its own.
import { request } from 'node:http';
import type { TestServer } from './server.ts';

export interface LoginReply {
  status: number;
  detail: string;
  retryAfter: string | undefined;
}

/** POST /api/session/login from the given local (source) address, on a connection of its own. */
export function loginFrom(
  server: TestServer,
  from: string,
  username: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<LoginReply> {
  const body = JSON.stringify({ username, password });
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}/api/session/login`,
      {
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          let detail = '';
          try {
            detail = String(JSON.parse(text).detail ?? '');
          } catch {
            detail = text;
          }
          const retry = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            detail,
            retryAfter: Array.isArray(retry) ? retry[0] : retry,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
