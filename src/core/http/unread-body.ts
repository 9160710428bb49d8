import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';

/** Up to this much of a refused body, Node reads and drops the rest and the connection stays. */
const DRAINED_BYTES = 1024 * 1024;

/**
 * An answer sent before a large request body arrived to its end (a refused upload chunk, a 401
 * or 413 on a large body) says `Connection: close`. The rest of that body is never read, so the
 * connection ends after the answer; without it a client sent its next request on the socket
 * that still held the refused bytes and saw 'other side closed' (test/station/uploads/
 * streamed-upload-suite.ts, "past MAX_UPLOAD_BYTES"). A small body (a declared length up to
 * 1 MiB) keeps the connection: Node reads and drops what is left of it after the answer, so a
 * client still writing it gets the answer, not EPIPE from a socket closed under its write (a
 * viewer's refused hook upload did, test/core/integrations.test.ts).
 */
export function closeAfterUnreadBody(): MiddlewareHandler {
  return async function closeAfterUnreadBody(c, next) {
    await next();
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    if (!env?.incoming || !env.outgoing || env.incoming.complete || env.outgoing.headersSent) return;
    const declared = Number(env.incoming.headers['content-length'] ?? Number.NaN);
    // Set on Node's response: @hono/node-server's writeHead merges it with the answer's headers.
    if (!(declared <= DRAINED_BYTES)) env.outgoing.setHeader('Connection', 'close');
  };
}
