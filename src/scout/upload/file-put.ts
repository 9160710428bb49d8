import { type FileHandle, open } from 'node:fs/promises';
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { alignedBuffer } from '../../core/aligned-buffer.ts';
import { releaseNow } from '../../core/release-memory.ts';

/**
 * A byte range of a file on disk, sent as a request body: the file by name, or an open handle
 * (an archive that is renamed while it is read; the handle stays open).
 */
export interface FileRange {
  file: string | FileHandle;
  offset: number;
  length: number;
}

const BLOCK_BYTES = 1024 * 1024;
/** Blocks kept between chunks: two per upload in flight (one read while the other is sent). */
const spareBlocks: Buffer[] = [];
const SPARE_BLOCKS_KEPT = 4;

const takeBlock = (): Buffer => spareBlocks.pop() ?? alignedBuffer(BLOCK_BYTES);

/**
 * Frees the spare blocks now; answers how many there were. The Scout calls it after each
 * operation (src/scout/services.ts), so an idle Scout keeps none: the two blocks an upload
 * leaves are 2 MiB of its idle memory (issue #27), and the next upload maps two new ones.
 */
export function dropSpareBlocks(): number {
  const dropped = spareBlocks.splice(0);
  for (const block of dropped) releaseNow(block);
  return dropped.length;
}

/** Resolves once `chunk` has left for the socket, so its memory may be read into again. */
function sent(req: ClientRequest, chunk: Buffer): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    req.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
  // Awaited later; a failure meanwhile must not count as unhandled.
  done.catch(() => {});
  return done;
}

/**
 * Sends a file range as the request body through two reused 1 MiB blocks: one is read into
 * while the other is on its way to the socket. A fresh buffer per read (createReadStream)
 * left the Scout holding freed 1 MiB buffers in glibc's heaps after every upload.
 */
async function sendRange(req: ClientRequest, range: FileRange): Promise<void> {
  const handle = typeof range.file === 'string' ? await open(range.file, 'r') : range.file;
  const blocks = [takeBlock(), takeBlock()] as const;
  const inFlight: [Promise<void> | undefined, Promise<void> | undefined] = [undefined, undefined];
  let finished = false;
  try {
    const end = range.offset + range.length;
    for (let position = range.offset, turn = 0; position < end; turn ^= 1) {
      await inFlight[turn];
      const block = turn === 0 ? blocks[0] : blocks[1];
      const { bytesRead } = await handle.read(block, 0, Math.min(block.length, end - position), position);
      if (bytesRead === 0) throw new Error(`the file ended at byte ${position}, before ${end}`);
      inFlight[turn] = sent(req, block.subarray(0, bytesRead));
      position += bytesRead;
    }
    await Promise.all(inFlight);
    req.end();
    finished = true;
  } finally {
    if (typeof range.file === 'string') await handle.close();
    // After a failure a destroyed socket may still name a block: those are left to the collector.
    if (finished)
      for (const block of blocks) if (spareBlocks.length < SPARE_BLOCKS_KEPT) spareBlocks.push(block);
  }
}

/** An http answer's headers as fetch's Headers. */
export function answerHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

/**
 * Sends a file range with node:http(s) and answers a fetch `Response`. fetch copies every piece
 * of a stream body on its way to the socket (undici's web-stream checks); here the file's
 * 1 MiB reads go to the socket as they are. Measured on a 1 GiB upload to a Station over
 * loopback: the client's CPU 2.2–2.5 s → 1.3–1.6 s, 167–178 → 186–189 MiB/s. TLS trusts what
 * fetch trusts (the process's default CA certificates).
 */
export function putFile(
  url: string,
  headers: Record<string, string>,
  range: FileRange,
  signal: AbortSignal,
): Promise<Response> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const req = send(
      target,
      { method: 'PUT', headers: { ...headers, 'content-length': String(range.length) }, signal },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('error', reject);
        res.on('end', () => {
          const body = parts.length > 0 ? Buffer.concat(parts) : null;
          resolve(new Response(body, { status: res.statusCode ?? 502, headers: answerHeaders(res) }));
        });
      },
    );
    req.on('error', reject);
    // A Station that answers before reading the whole body (a refusal) ends the upload early:
    // the answer decides, not the broken pipe.
    sendRange(req, range).catch((error: unknown) => {
      if (!req.writableFinished) req.destroy(error as Error);
    });
  });
}
