import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { type ReadTarget, readFromSocket, takeableBody } from '../../core/http/socket-reads.ts';
import { PiecePool } from '../restore/piece-pool.ts';

/** The blocks a download is read into: the pieces the restore's decryption takes (coalescer.ts). */
const BLOCK = 1024 * 1024;
/** Answers up to this size are read the ordinary way. */
const FROM_BYTES = BLOCK + 1;

/**
 * A successful answer's body, read from its socket straight into 1 MiB blocks when it can be
 * (issue #27): Node's HTTP client reads a body 64 KiB at a time, copies each read into a fresh
 * buffer and passes it through the stream machinery, and the restore then copied those into
 * its 1 MiB pieces. Here the kernel fills the blocks themselves (1–2 MiB per read), the same
 * socket reads as the Station's for an upload (src/core/http/socket-reads.ts). The blocks are
 * a pool's, given back by the stage that consumes them (piece-pool.ts). Only for a plain TCP
 * socket (not TLS) and a declared length over 1 MiB; otherwise `res` itself. The connection
 * never goes back to the parser: it is closed at the end. The body fails (with `signal`'s reason
 * when it aborted) when the connection closes before the declared length.
 */
export function socketBody(res: IncomingMessage, signal: AbortSignal): Readable {
  const taken = takeableBody(res, FROM_BYTES);
  if (!taken) return res;
  const { socket, length } = taken;
  const pool = new PiecePool({ size: BLOCK, keep: 4 });
  let block: Buffer | null = null;
  let filled = 0;
  let left = length;
  /** Settles when the reader wants more (the body's buffer was full). */
  let wanted: (() => void) | null = null;
  // A block at a time (object mode): a byte stream's read() joins what waits into a new buffer.
  const body = new Readable({
    objectMode: true,
    highWaterMark: 4,
    read() {
      const waiting = wanted;
      wanted = null;
      waiting?.();
    },
    destroy(error, done) {
      pool.close();
      socket.destroy();
      done(error);
    },
  });
  const target: ReadTarget = {
    room() {
      block ??= pool.take();
      return block.subarray(filled);
    },
    took(n) {
      filled += n;
      left -= n;
      if (filled < BLOCK && left > 0) return undefined;
      const full = body.push(pool.handOn(block as Buffer, filled));
      block = null;
      filled = 0;
      if (full || left === 0) return undefined;
      return new Promise<void>((resolve) => {
        wanted = resolve;
      });
    },
  };
  // The parser no longer sees the body: the answer it thinks cut short must not throw.
  res.on('error', () => {});
  readFromSocket(res, socket, length, target, () => {}).then(
    () => {
      body.push(null);
      socket.destroy();
    },
    (error: unknown) => {
      const cause = error as Error;
      body.destroy(
        signal.aborted
          ? (signal.reason as Error)
          : new Error(
              `the Station's answer stopped after ${length - left} of ${length} bytes: ${cause.message}`,
              {
                cause,
              },
            ),
      );
    },
  );
  return body;
}
