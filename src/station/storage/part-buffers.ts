/** Free part buffers kept for the next upload; more are left to the garbage collector. */
const KEEP = 2;
const free: Buffer[] = [];

/**
 * The memory of one S3 part (16 MiB for archives up to ~160 GiB) is reused from upload to
 * upload (issue #27: reuse, don't allocate) instead of a fresh buffer per chunk: with glibc's
 * default malloc a freed 16 MiB block raises its mmap threshold, and the next ones came from the
 * heap and stayed with the process.
 */
export function takePartBuffer(size: number): Buffer {
  const at = free.findIndex((b) => b.length === size);
  return at >= 0 ? (free.splice(at, 1)[0] as Buffer) : Buffer.allocUnsafeSlow(size);
}

/** Gives a part buffer back once no request reads it any more. */
export function returnPartBuffer(buffer: Buffer): void {
  if (free.length >= KEEP) free.shift();
  free.push(buffer);
}
