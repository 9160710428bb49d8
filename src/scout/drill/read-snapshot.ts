import type { Readable } from 'node:stream';
import type { ScoutKey } from '../archive/x25519.ts';
import { type FingerprintEntry, jobFingerprint } from '../jobs/walk.ts';
import { byteString, bytesOf, shown } from '../restore/byte-paths.ts';
import { safeRelative } from '../restore/restorer.ts';
import { readSnapshotTar } from '../restore/snapshot-stream.ts';
import { readTar, TarError } from '../restore/tar-reader.ts';

export interface SnapshotReading {
  /** The job fingerprint of the entries read (the same encoding the backup uses). */
  fingerprint: string;
  /** Regular files read. */
  files: number;
  /** Bytes of file data read. */
  bytes: number;
}

/**
 * Reads a snapshot (age → zstd → tar) to its very end and writes nothing: every entry's data
 * is read, so age's authentication of the whole stream and zstd's checksums all run. Memory
 * stays bounded by the stream chunks.
 */
export async function readSnapshot(options: {
  source: Readable;
  keys: ScoutKey[];
  signal?: AbortSignal;
  /** Encrypted bytes read so far (a download's progress). */
  onSourceBytes?: (bytes: number) => void;
}): Promise<SnapshotReading> {
  const entries: FingerprintEntry[] = [];
  /** Sizes of the files read so far (by byte-string path), for the hard links (type '1') to them. */
  const sizes = new Map<string, number>();
  let files = 0;
  let bytes = 0;
  await readSnapshotTar(options, async (tarStream) => {
    await readTar(tarStream, async (entry, data) => {
      options.signal?.throwIfAborted();
      const rel = safeRelative(byteString(entry.path));
      const path = bytesOf(rel);
      for await (const chunk of data) {
        options.signal?.throwIfAborted();
        if (entry.type === '0') bytes += chunk.length;
      }
      if (rel === '') return;
      if (entry.type === '5') entries.push({ path, type: 'dir', size: 0 });
      else if (entry.type === '2') entries.push({ path, type: 'symlink', size: 0 });
      else if (entry.type === '0') {
        files += 1;
        sizes.set(rel, entry.size);
        entries.push({ path, type: 'file', size: entry.size });
      } else if (entry.type === '1') {
        // Another name of a file read before: a file of the same size, as the walk saw it.
        files += 1;
        entries.push({ path, type: 'file', size: sizes.get(safeRelative(byteString(entry.linkname))) ?? 0 });
      } else {
        throw new TarError(
          `entry "${shown(rel)}" has type ${JSON.stringify(entry.type)}, which backupd never writes`,
        );
      }
    });
    // Past the end-of-archive blocks: read the rest so every check of the stream runs.
    for await (const _ of tarStream) options.signal?.throwIfAborted();
  });
  return { fingerprint: jobFingerprint(entries), files, bytes };
}
