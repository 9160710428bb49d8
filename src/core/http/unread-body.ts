import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';

/**
 * An answer sent before the request's body arrived to its end (a refused upload chunk, a 401 or
 * 413 on a large body) says `Connection: close`. The rest of that body is never read, so the
 * connection ends after the answer; without it a client sent its next request on the socket
 * that still held the refused bytes and saw 'other side closed' (test/station/uploads/
 * streamed-upload-suite.ts, "past MAX_UPLOAD_BYTES").
 */
export function closeAfterUnreadBody(): MiddlewareHandler {
  return async function closeAfterUnreadBody(c, next) {
    await next();
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    // Set on Node's response: @hono/node-server's writeHead merges it with the answer's headers.
    if (env?.incoming && env.outgoing && !env.incoming.complete && !env.outgoing.headersSent)
      env.outgoing.setHeader('Connection', 'close');
  };
}
