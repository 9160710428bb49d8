import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { notFound, rangeNotSatisfiable } from '../../core/errors.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { LEGACY_SNAPSHOT_FILENAME_HEADER, SNAPSHOT_FILENAME_HEADER } from '../../shared/protocol/headers.ts';
import type { SnapshotKey, SnapshotStore } from '../storage/storage.ts';
import { type DownloadFile, openDownload, writeFileRange, writeStream } from './write-download.ts';

/** Parses one `bytes=` range; null when absent, 'invalid' when unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'invalid' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return 'invalid';
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'invalid';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start > end || start >= size) return 'invalid';
  return { start, end };
}

type Span = { start: number; end: number };

/** Node's response when Node's http server serves the request (not Hono's app.request). */
const nodeResponse = (c: Context<AppEnv>): ServerResponse | undefined =>
  (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;

/** Headers set before the handler (X-Content-Type-Options, …), each Set-Cookie kept apart. */
function headersSoFar(c: Context<AppEnv>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  c.res.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = c.res.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  return headers;
}

/** The snapshot's file, opened before anything is sent so that a vanished file is a 404. */
async function openLocal(path: string, key: SnapshotKey): Promise<DownloadFile> {
  try {
    return await openDownload(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw notFound(`snapshot ${key.filename} is no longer stored`);
    }
    throw error;
  }
}

/**
 * Writes the answer straight into Node's response: from the disk store's file with two reused
 * buffers, from another store's stream with backpressure. A client that goes away ends it.
 */
async function writeDirect(
  c: Context<AppEnv>,
  out: ServerResponse,
  store: SnapshotStore,
  key: SnapshotKey,
  answer: { status: number; headers: Record<string, string>; span: Span; range: Span | undefined },
): Promise<Response> {
  const path = store.localPath?.(key);
  const file = path ? await openLocal(path, key) : undefined;
  const stream = file ? undefined : await store.read(key, answer.range);
  try {
    const headers = headersSoFar(c);
    for (const [name, value] of Object.entries(answer.headers)) headers[name.toLowerCase()] = value;
    headers['x-request-id'] = c.get('requestId');
    out.writeHead(answer.status, headers);
    if (c.req.raw.method !== 'HEAD') {
      if (file) await writeFileRange(out, file, answer.span.start, answer.span.end);
      else if (stream) await writeStream(out, stream);
    }
    out.end();
  } catch (error) {
    out.destroy();
    c.get('log')?.info({ err: error, filename: key.filename }, 'download ended before its last byte');
  } finally {
    await file?.handle.close();
    stream?.destroy();
  }
  // Tells @hono/node-server that the answer has been sent already.
  return new Response(null, { status: answer.status, headers: { 'x-hono-already-sent': 'true' } });
}

/** Sends a stored snapshot as octet-stream, with HTTP Range support so downloads can resume. */
export async function sendSnapshot(
  c: Context<AppEnv>,
  store: SnapshotStore,
  located: { key: SnapshotKey; sizeBytes: number },
): Promise<Response> {
  const { key, sizeBytes } = located;
  const range = parseRange(c.req.header('range'), sizeBytes);
  if (range === 'invalid') throw rangeNotSatisfiable(sizeBytes);
  const span = range ?? { start: 0, end: sizeBytes - 1 };
  const status = range ? 206 : 200;
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    'Content-Disposition': `attachment; filename="${key.filename}"`,
    [SNAPSHOT_FILENAME_HEADER]: key.filename,
    [LEGACY_SNAPSHOT_FILENAME_HEADER]: key.filename,
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': String(span.end - span.start + 1),
    ...(range ? { 'Content-Range': `bytes ${range.start}-${range.end}/${sizeBytes}` } : {}),
  };
  const out = nodeResponse(c);
  if (out) return writeDirect(c, out, store, key, { status, headers, span, range: range ?? undefined });
  const body = Readable.toWeb(await store.read(key, range ?? undefined)) as ReadableStream;
  return new Response(body, { status, headers });
}
