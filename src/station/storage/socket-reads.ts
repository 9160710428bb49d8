import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { type ReadTarget, readFromSocket, takeableBody } from '../../core/http/socket-reads.ts';

export type { ReadTarget };

/** Reads the whole body into `target`; resolves at its end, rejects as `eachPiece` does (body-pieces.ts). */
export type SocketReads = (target: ReadTarget) => Promise<void>;

/** Bodies up to this size are read the ordinary way (they cost little, and keep their connection). */
export const SOCKET_READS_FROM_BYTES = 1024 * 1024 + 1;

const offered = new WeakMap<Readable, SocketReads>();

/** The socket reads offered for `body`, if any (see `offerSocketReads`). */
export const socketReadsOf = (body: Readable): SocketReads | undefined => offered.get(body);

/** Offers `reads` for `body` (a wrapper of a body that has them: upload-lease.ts' guard). */
export function offerReads(body: Readable, reads: SocketReads): void {
  offered.set(body, reads);
}

/**
 * Offers a chunk's body to be read from its socket straight into the store's memory (issue #27
 * item 5). Node's HTTP parser reads a body 64 KiB at a time, copies each read into a fresh
 * buffer and passes it through the stream machinery (~16,000 reads per GiB): measured on this
 * kind of machine, a bare node:http server receiving, hashing and batching 1 GiB spent 1.75–1.92
 * CPU-s that way, and 0.99–1.01 s reading the socket itself into the batch blocks, which the
 * kernel fills 1–2 MiB per read. Node's documented way to read into given memory is
 * `net.Socket`'s `onread` option; a server's socket is made by Node, so this sets the same
 * keys on it (found on a socket made with the option) and gives its handle the memory. Offered
 * only for a plain TCP socket on this Node and a body of a declared length over 1 MiB; otherwise
 * nothing is offered and the body is read as before (body-pieces.ts).
 *
 * Once taken over, the socket never goes back to the parser: the answer says
 * `Connection: close` (src/core/http/unread-body.ts then lingers until the client closes).
 */
export function offerSocketReads(request: IncomingMessage, response: ServerResponse): Readable {
  const body = takeableBody(request, SOCKET_READS_FROM_BYTES);
  if (!body) return request;
  offered.set(request, (target) =>
    readFromSocket(request, body.socket, body.length, target, () => {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }),
  );
  return request;
}
