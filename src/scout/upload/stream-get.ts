import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { answerHeaders } from './file-put.ts';
import { socketBody } from './socket-body.ts';

/** A GET's answer: its status and headers as a fetch Response, and its body as it streams. */
export interface StreamedAnswer {
  /** The answer; a failure's body (a refusal's JSON) is read into it, a success's is not. */
  response: Response;
  /** A success's body, streaming (its pieces as the socket gives them); null for a failure. */
  body: Readable | null;
}

/**
 * A GET with node:http(s) whose successful answer streams as a node stream (socket-body.ts): no
 * web stream between the socket and the reader (fetch → Readable.fromWeb cost a restore from a
 * Station ~40 % more main-thread CPU than the same snapshot read from disk, in promises per
 * piece and their garbage). TLS trusts what fetch trusts (the process's default CA
 * certificates); `signal` aborts the request and the body.
 */
export function getStream(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<StreamedAnswer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<StreamedAnswer>((resolve, reject) => {
    const req = send(target, { method: 'GET', headers, signal }, (res) => {
      const status = res.statusCode ?? 502;
      if (status >= 200 && status < 300) {
        resolve({
          response: new Response(null, { status, headers: answerHeaders(res) }),
          body: socketBody(res, signal),
        });
        return;
      }
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('error', reject);
      res.on('end', () => {
        const body = parts.length > 0 ? Buffer.concat(parts) : null;
        resolve({ response: new Response(body, { status, headers: answerHeaders(res) }), body: null });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
