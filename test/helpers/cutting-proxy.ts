// A plain-HTTP reverse proxy that can cut an answer off mid-body, as a network or a busy server
// does: the client sees its connection end before the declared Content-Length.
import { createServer } from 'node:http';
import { listenLocal } from './receiver.ts';
import { forwardRequest } from './tls-proxy.ts';

export interface CuttingProxy {
  url: string;
  /** `Range` of every request whose path contains the cut's `pathPart`, oldest first ('' = none). */
  ranges: string[];
  /** The next answer to a path containing `pathPart` is cut after `bytes` bytes of its body. */
  cutNext(pathPart: string, bytes: number): void;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const upstream = new URL(target);
  let cut: { pathPart: string; bytes: number } | null = null;
  const ranges: string[] = [];
  let watched = '';
  const server = createServer((req, res) => {
    if (watched && req.url?.includes(watched)) ranges.push(String(req.headers.range ?? ''));
    const cutting = cut && req.url?.includes(cut.pathPart) ? cut : null;
    if (cutting) cut = null;
    const out = forwardRequest(upstream, req, res);
    out.on('error', () => res.destroy());
    req.pipe(out);
    if (!cutting) return;
    // Counts the body as it is written to the client; the socket is destroyed at the cut.
    let left = cutting.bytes;
    const write = res.write.bind(res) as (piece: Buffer, ...rest: unknown[]) => boolean;
    res.write = ((piece: Buffer, ...rest: unknown[]) => {
      if (left <= 0) return false;
      if (piece.length < left) {
        left -= piece.length;
        return write(piece, ...rest);
      }
      write(piece.subarray(0, left));
      left = 0;
      res.destroy();
      out.destroy();
      return false;
    }) as typeof res.write;
  });
  const { port, close } = await listenLocal(server);
  return {
    url: `http://127.0.0.1:${port}`,
    ranges,
    cutNext(pathPart, bytes) {
      cut = { pathPart, bytes };
      watched = pathPart;
    },
    close,
  };
}
