import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { finished } from 'node:stream';

/** Memory a request body is read into: the store's own blocks (write-batches.ts). */
export interface ReadTarget {
  /** Where the next bytes go; null while there is none (until the promise `took` returned settles). */
  room(): Buffer | null;
  /**
   * `n` bytes were read into the last room. A promise when the next room must wait (reading
   * stops until it settles); throws (or rejects) to refuse the body.
   */
  took(n: number): Promise<void> | undefined;
}

/** Bytes read while there is no room (a read Node started itself), or after the body's end. */
const SPILL_BYTES = 64 * 1024;
/** Where what arrives after the body (or after a refusal) is read and dropped. */
const dropped = Buffer.allocUnsafe(SPILL_BYTES);
/** The handle of a plain TCP socket (Node's TCPWrap, a StreamBase). */
interface StreamHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
  useUserBuffer(buffer: Uint8Array): void;
}

/**
 * Node's own keys of a socket that reads into memory it was given (net.Socket's `onread`
 * option): found once on a socket made with that option, null when this Node has none.
 */
let onreadKeys: { buffer: symbol; callback: symbol; next: symbol } | null | undefined;

function findOnreadKeys(): typeof onreadKeys {
  try {
    const probe = new Socket({ onread: { buffer: () => Buffer.alloc(1), callback: () => true } });
    const keys = new Map(Object.getOwnPropertySymbols(probe).map((key) => [key.description, key]));
    probe.destroy();
    const buffer = keys.get('kBuffer');
    const callback = keys.get('kBufferCb');
    const next = keys.get('kBufferGen');
    return buffer && callback && next ? { buffer, callback, next } : null;
  } catch {
    return null;
  }
}

function handleOf(socket: Socket): StreamHandle | null {
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  const usable =
    handle &&
    typeof handle.useUserBuffer === 'function' &&
    typeof handle.readStart === 'function' &&
    typeof handle.readStop === 'function';
  return usable ? (handle as StreamHandle) : null;
}

/**
 * A body that can be read from its socket straight into given memory: of a declared length of
 * at least `fromBytes` (not chunked), on a plain TCP socket whose handle can read into memory it
 * is given (net.Socket's `onread` option), on a Node whose keys for that are found, and not taken
 * over already; null otherwise (the body is then read the ordinary way).
 */
export function takeableBody(
  message: IncomingMessage,
  fromBytes: number,
): { socket: Socket; length: number } | null {
  const length = Number(message.headers['content-length']);
  if (!(length >= fromBytes) || !Number.isSafeInteger(length)) return null;
  if (message.headers['transfer-encoding'] !== undefined) return null;
  const socket = message.socket as Socket | null;
  if (!socket || socket.constructor !== Socket || handleOf(socket) === null) return null;
  onreadKeys ??= findOnreadKeys();
  if (!onreadKeys || (socket as unknown as Record<symbol, unknown>)[onreadKeys.buffer]) return null;
  return { socket, length };
}

/**
 * Reads the rest of `message`'s body (`length` bytes in all) from `socket` into `target`
 * (`takeableBody` found it usable). What the parser read before the take-over goes first, in
 * order; `takingOver` runs once the socket is taken (it never goes back to the HTTP parser).
 */
export async function readFromSocket(
  request: IncomingMessage,
  socket: Socket,
  length: number,
  target: ReadTarget,
  takingOver: () => void,
): Promise<void> {
  const keys = onreadKeys;
  if (!keys) throw new Error('this Node reads no socket into given memory');
  // Out of the HTTP parser's run (a handler may run inside it): what it read of the body is in
  // the request, in order, and the take-over below is synchronous, so it reads nothing more.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const handle = handleOf(socket);
  if (!handle || socket.destroyed || request.destroyed) throw new Error('the request went away');
  /** Bytes read but not yet in the target, in order. */
  const queue: Buffer[] = [];
  let left = length;
  for (let piece = request.read() as Buffer | null; piece !== null; piece = request.read() as Buffer | null) {
    queue.push(piece);
    left -= piece.length;
  }
  if (socket.readableLength > 0 && !request.complete) {
    // Read from the socket but not yet given to the parser (Node's HTTP client pauses the socket
    // while its answer is not read): the body's next bytes (a declared length: no framing), in
    // order after the parser's. Taken without a 'data' event, which would give them to it.
    socket.removeAllListeners('data');
    for (let piece = socket.read() as Buffer | null; piece !== null; piece = socket.read() as Buffer | null) {
      queue.push(piece);
      left -= piece.length;
    }
  }
  if (request.complete) {
    // The parser had read all of it: nothing to take over.
    for (const piece of queue) await copyInto(target, piece);
    return;
  }
  takingOver();
  const taken = socket as unknown as Record<symbol, unknown>;

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let bodyError: unknown;
    let bodyEnded = false;
    /** The target made the reader wait (a promise `took` returned): no room until it settles. */
    let busy = false;
    /** The memory the handle reads into next: a room of the target, or a spill buffer. */
    let next: Buffer | null = null;
    let nextIsRoom = false;

    const resumeReading = () => {
      if (socket.destroyed || handle.reading) return;
      handle.reading = true;
      handle.readStart();
    };

    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      stopWatching();
      socket.off('close', onClose);
      // What still arrives is dropped: after a refusal the rest of the body is read so that the
      // answer arrives (the connection closes after it); after the end, reading resumes when
      // Node's lingering close or its drain of the request asks for it.
      taken[keys.callback] = () => true;
      taken[keys.next] = () => dropped;
      if (error === undefined) {
        resolve();
        return;
      }
      resumeReading();
      reject(error);
    };

    /** Once the target took everything so far without waiting: the end, a failure, or more reads. */
    const onward = () => {
      if (bodyError !== undefined) settle(bodyError);
      else if (left === 0) settle();
      else if (bodyEnded) settle(new Error('the request body ended before its declared length'));
      else resumeReading();
    };

    const wait = (pending: Promise<void>) => {
      busy = true;
      pending.then(
        () => {
          busy = false;
          if (settled) return;
          try {
            if (feed()) onward();
          } catch (error) {
            settle(error);
          }
        },
        (error: unknown) => {
          busy = false;
          settle(error);
        },
      );
    };

    /**
     * Copies queued bytes (read before the take-over, or while the target waited) into the
     * target, in order; false when the target made it wait.
     */
    const feed = (): boolean => {
      while (queue.length > 0) {
        const piece = queue[0] as Buffer;
        const room = target.room();
        if (room === null) throw new Error('the target has no room while it does not wait');
        const n = piece.copy(room, 0, 0, Math.min(room.length, piece.length));
        if (n === piece.length) queue.shift();
        else queue[0] = piece.subarray(n);
        const pending = target.took(n);
        if (pending) {
          wait(pending);
          return false;
        }
      }
      return true;
    };

    /** The memory of the next read: the target's room, or a spill buffer while it has none. */
    const nextBuffer = (): Buffer => {
      if (settled || left === 0) {
        next = dropped;
        nextIsRoom = false;
        return dropped;
      }
      const room = busy ? null : target.room();
      nextIsRoom = room !== null;
      next = room
        ? room.subarray(0, Math.min(room.length, left))
        : Buffer.allocUnsafe(Math.min(SPILL_BYTES, left));
      return next;
    };

    /** A read of `n` bytes into `into`; false stops reading (Node's onread callback). */
    const onRead = (n: number, into: Buffer): boolean => {
      if (settled || left === 0 || into !== next) return true;
      left -= n;
      try {
        if (nextIsRoom) {
          const pending = target.took(n);
          if (pending) {
            wait(pending);
            return false;
          }
        } else {
          // A read while the target had no room (Node started reading itself): kept in order.
          queue.push(into.subarray(0, n));
          if (busy || !feed()) return false;
        }
      } catch (error) {
        settle(error);
        return true;
      }
      if (left === 0) {
        settle();
        return false;
      }
      return true;
    };

    const stopWatching = finished(request, (error) => {
      if (settled) return;
      bodyEnded = true;
      bodyError = error ?? bodyError;
      if (!busy) onward();
    });
    function onClose() {
      if (settled) return;
      bodyError ??= new Error('the connection closed before the end of the body');
      if (!busy) onward();
    }
    socket.once('close', onClose);

    // The take-over: from here on the socket's reads come to onRead, into nextBuffer's memory.
    taken[keys.callback] = onRead;
    taken[keys.next] = nextBuffer;
    let fed: boolean;
    try {
      fed = feed();
    } catch (error) {
      fed = false;
      settle(error);
    }
    const first = nextBuffer();
    taken[keys.buffer] = first;
    handle.useUserBuffer(first);
    if (fed) onward();
  });
}

/** Copies `piece` into the target's rooms, waiting as it asks. */
async function copyInto(target: ReadTarget, piece: Buffer): Promise<void> {
  for (let at = 0; at < piece.length; ) {
    const room = target.room();
    if (room === null) throw new Error('the target has no room while it does not wait');
    const n = piece.copy(room, 0, at);
    at += n;
    const pending = target.took(n);
    if (pending) await pending;
  }
}
