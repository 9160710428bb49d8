import type { Readable } from 'node:stream';
import { finished } from 'node:stream';

/**
 * Ends a body that did not end as `for await` does (Node's stream destroyer): a request to this
 * server is let go without its socket, so the answer (400, 413) can still be sent on it.
 */
export function letGo(body: Readable): void {
  const request = body as Readable & { _consuming?: unknown; socket?: unknown };
  if (typeof request._consuming === 'boolean') request.socket = null;
  body.destroy();
}

/**
 * Hands each piece of `body` to `take` as it arrives ('data' events), pausing the body while a
 * promise `take` returned is pending. Resolves at the body's end; rejects with the body's error
 * (the client went away) once the pending `take` has settled, or with `take`'s own error. A body
 * that did not end is destroyed, as `for await` does on an early exit.
 *
 * Why not `for await`: a request body arrives in ~16,000 socket reads per GiB, and the async
 * iterator costs a promise and a microtask turn or two per read (Readable's iterator, then the
 * loop's await). Measured on this kind of machine with bench/station.ts' upload, part of the
 * Station's CPU per received GiB (see write-batches.ts for the rest).
 */
export function eachPiece(body: Readable, take: (piece: Buffer) => Promise<void> | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let pending: Promise<void> | undefined;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      stop();
      if (error === undefined) {
        resolve();
        return;
      }
      if (!body.readableEnded && !body.destroyed) letGo(body);
      reject(error);
    };
    const onData = (piece: Buffer | string) => {
      if (settled) return;
      let waiting: Promise<void> | undefined;
      try {
        waiting = take(Buffer.isBuffer(piece) ? piece : Buffer.from(piece));
      } catch (error) {
        settle(error);
        return;
      }
      if (waiting === undefined) return;
      body.pause();
      pending = waiting.then(
        () => {
          pending = undefined;
          if (!settled) body.resume();
        },
        (error: unknown) => {
          pending = undefined;
          settle(error);
        },
      );
    };
    const stop = finished(body, (error) => {
      const outcome = error ?? undefined;
      if (pending) void pending.then(() => settle(outcome));
      else settle(outcome);
    });
    body.on('data', onData);
  });
}
