import { Readable } from 'node:stream';
import type { Context } from 'hono';
import type { SnapshotKey, SnapshotStorage } from '../storage/storage.ts';

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

/** Streams a stored snapshot as octet-stream, with HTTP Range support so downloads can resume. */
export async function sendSnapshot(
  c: Context,
  store: SnapshotStorage,
  located: { key: SnapshotKey; sizeBytes: number },
): Promise<Response> {
  const { key, sizeBytes } = located;
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    'Content-Disposition': `attachment; filename="${key.filename}"`,
    'X-Relay-Snapshot-Filename': key.filename,
    'X-Content-Type-Options': 'nosniff',
  };
  const range = parseRange(c.req.header('range'), sizeBytes);
  if (range === 'invalid') {
    return c.json({ detail: `range not satisfiable for ${sizeBytes} bytes` }, 416, {
      'Content-Range': `bytes */${sizeBytes}`,
    });
  }
  const body = Readable.toWeb(await store.read(key, range ?? undefined)) as ReadableStream;
  if (!range) {
    return new Response(body, { status: 200, headers: { ...headers, 'Content-Length': String(sizeBytes) } });
  }
  return new Response(body, {
    status: 206,
    headers: {
      ...headers,
      'Content-Length': String(range.end - range.start + 1),
      'Content-Range': `bytes ${range.start}-${range.end}/${sizeBytes}`,
    },
  });
}
