import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { MiddlewareHandler } from 'hono';

/** How long a closing connection still reads (and drops) a refused body so its answer arrives. */
const LINGER_MS = 2_000;

/**
 * An answer sent before the request's body arrived to its end (a refused upload chunk, a 401 or
 * 413 on a large body, a 403 on an upload) says `Connection: close`. The rest of that body is not
 * kept, so the connection ends after the answer; without it a client sent its next request on
 * the socket that still held the refused bytes and saw 'other side closed' (test/station/
 * uploads/streamed-upload-suite.ts, "past MAX_UPLOAD_BYTES"; upload-flow-suite.ts, "a chunk
 * running past archive_size_bytes", whose body the route let go: Node then stops reading the
 * socket, whatever the body's size).
 *
 * The close lingers (docs/api.md, README "Request bodies"): a socket closed while the client's
 * bytes wait unread in it is reset, and a reset can reach the client before it read the answer,
 * which it then never sees (EPIPE instead of a 413 in test/core/body-limits.test.ts, instead of
 * a viewer's 403 in test/core/integrations.test.ts). So the server ends its side after the
 * answer, goes on reading and dropping what arrives, and closes when the client ends its side
 * or after LINGER_MS, as Apache and nginx do.
 */
export function closeAfterUnreadBody(): MiddlewareHandler {
  return async function closeAfterUnreadBody(c, next) {
    await next();
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    if (!env?.incoming || !env.outgoing || env.incoming.complete || env.outgoing.headersSent) return;
    // Set on Node's response: @hono/node-server's writeHead merges it with the answer's headers.
    env.outgoing.setHeader('Connection', 'close');
    // The response's socket: a body the route let go no longer names it (body-pieces.ts).
    if (env.outgoing.socket) lingerOnClose(env.outgoing.socket, env.incoming);
  };
}

/**
 * Node's server closes a `Connection: close` socket with `destroySoon` once the answer is
 * written: replaced on this one socket by a close that lingers. The request is dumped so the
 * HTTP parser drops the body bytes it still reads instead of queueing them.
 */
function lingerOnClose(socket: Socket, request: IncomingMessage): void {
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    request.removeAllListeners('data');
    request.resume();
    const close = () => socket.destroy();
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    socket.once('end', close);
    socket.once('close', () => clearTimeout(timer));
  };
}
