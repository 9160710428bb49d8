import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdCompress, constants as zlibConstants } from 'node:zlib';
import { Pack } from 'tar';
import { logger } from '../../core/log.ts';
import { createAgeEncrypt } from './age.ts';

const log = logger.child({ mod: 'scout/archive' });
const MIB = 1024 * 1024;

export interface ArchiveOptions {
  jobDir: string;
  /** Entries relative to jobDir, '/'-separated, parents before children (from walkJob). */
  entries: string[];
  followSymlinks: boolean;
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
function measure(onBytes: (n: number) => void) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      onBytes(size);
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex') }) };
}

/**
 * One streaming pass: tar (pax: modes, mtimes and owners, as GNU tar writes them) → zstd level 3 →
 * age to the Scout key → SHA-256 and size → a `.part` file renamed into place when complete.
 * Memory stays constant whatever the archive size.
 */
export async function writeArchive(options: ArchiveOptions): Promise<ArchiveResult> {
  const pack = new Pack({
    cwd: options.jobDir,
    portable: false,
    noDirRecurse: true,
    follow: options.followSymlinks,
    strict: false,
    onwarn: (code: string, message: string) => log.warn({ code }, `archive: ${message}`),
  });
  for (const entry of options.entries) pack.add(entry);
  pack.end();
  let tarBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      tarBytes += chunk.length;
      options.onProgress?.(tarBytes);
      done(null, chunk);
    },
  });
  const zstd = createZstdCompress({
    chunkSize: MIB,
    params: { [zlibConstants.ZSTD_c_compressionLevel]: 3, [zlibConstants.ZSTD_c_checksumFlag]: 1 },
  });
  const output = measure(() => {});
  const partPath = `${options.outPath}.part`;
  try {
    await pipeline(
      pack,
      counter,
      zstd,
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
