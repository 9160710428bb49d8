import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { AppError, badRequest } from '../errors.ts';

export const MIB = 1024 * 1024;

function tooLarge(limit: number, what: string): AppError {
  return new AppError(413, `the ${what} is larger than ${limit / MIB} MiB; send a smaller one`, {
    code: 'body_too_large',
  });
}

/** Reads a Node request stream, counting bytes; stops listening (and rejects) past `limit`. */
function readIncoming(incoming: IncomingMessage, limit: number, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        incoming.pause();
        chunks.length = 0;
        reject(tooLarge(limit, what));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = () => {
      cleanup();
      reject(badRequest(`the ${what} was cut off before its end; send it again`));
    };
    const onClose = () => {
      if (!incoming.complete) onError();
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** The same over a web stream (other runtimes, or a body Hono already wrapped). */
async function readWeb(body: ReadableStream<Uint8Array>, limit: number, what: string): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let step: Awaited<ReturnType<typeof reader.read>>;
    try {
      step = await reader.read();
    } catch {
      throw badRequest(`the ${what} was cut off before its end; send it again`);
    }
    if (step.done) return Buffer.concat(chunks, size);
    size += step.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit, what);
    }
    chunks.push(step.value);
  }
}

/**
 * Reads the whole request body, but never more than `limit` bytes: the bytes are counted as
 * they arrive (whatever `Content-Length` says, or without one), and past the limit reading
 * stops with a 413. A declared `Content-Length` above the limit is refused before reading.
 */
export async function readBody(c: Context, limit: number, what = 'request body'): Promise<Buffer> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit, what);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming && !incoming.readableDidRead && !incoming.readableEnded) {
    return readIncoming(incoming, limit, what);
  }
  const body = c.req.raw.body;
  if (!body) return Buffer.alloc(0);
  return readWeb(body, limit, what);
}
