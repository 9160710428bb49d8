import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { WalkEntry } from '../jobs/walk.ts';
import { createAgeEncrypt } from './age.ts';
import { byteCounter } from './byte-counter.ts';
import { createParallelZstd } from './parallel-zstd.ts';
import { tarEntries } from './tar-writer.ts';

export interface ArchiveOptions {
  jobDir: string;
  /** What to archive, parents before children (from walkJob). */
  entries: WalkEntry[];
  followSymlinks?: boolean;
  /** A file changed or vanished while archived; the archive stays valid. */
  onWarning?: (path: string, message: string) => void;
  /** The X25519 public key the archive is encrypted to. */
  recipient: Uint8Array;
  /** Where the finished archive goes; it appears there only complete. */
  outPath: string;
  signal?: AbortSignal;
  /** Called with the tar bytes produced so far (source bytes plus headers). */
  onProgress?: (tarBytes: number) => void;
}

export interface ArchiveResult {
  size: number;
  sha256: string;
}

/** Counts and hashes what passes through. */
function measure() {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex') }) };
}

/**
 * One streaming pass: tar (pax: modes, mtimes and owners; tar-writer.ts) → zstd level 3
 * on every core (parallel-zstd.ts) →
 * age to the Scout key → SHA-256 and size → a `.part` file renamed into place when complete.
 * Memory stays constant whatever the archive size.
 */
export async function writeArchive(options: ArchiveOptions): Promise<ArchiveResult> {
  const tar = Readable.from(
    tarEntries(options.jobDir, options.entries, {
      signal: options.signal,
      onWarning: options.onWarning,
      followSymlinks: options.followSymlinks,
    }),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
  const counter = byteCounter((bytes) => options.onProgress?.(bytes));
  const output = measure();
  const partPath = `${options.outPath}.part`;
  try {
    await pipeline(
      tar,
      counter,
      createParallelZstd(3),
      createAgeEncrypt(options.recipient),
      output.stream,
      createWriteStream(partPath, { flush: true }),
      { signal: options.signal },
    );
    await rename(partPath, options.outPath);
  } catch (error) {
    await rm(partPath, { force: true });
    throw error;
  }
  return output.result();
}
