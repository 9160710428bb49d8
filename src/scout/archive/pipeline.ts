import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import type { WalkEntry } from '../jobs/walk.ts';
import { newHeader } from './age.ts';
import { BlockFiller } from './block-filler.ts';
import { BlockPool, type Slot } from './block-pool.ts';
import { SealWorker } from './seal-worker.ts';
import { type ArchiveSkip, writeTar } from './tar-writer.ts';
import type { XattrLookup } from './xattr-scan.ts';
import { frameBound, ZstdWorkers } from './zstd-workers.ts';

/**
 * Tar bytes per zstd frame. 1 MiB frames compress within 1 % of 4 MiB ones on the bench
 * dataset, and keep the memory in flight small (1 GiB archive: peak RSS +87 MiB, not +110).
 */
const BLOCK = 1024 * 1024;

/**
 * Slots in the pool (block-pool.ts), each a block and its frame (2 MiB): the blocks in flight,
 * three per zstd worker and at least 8. Measured on the 0.25 GiB bench dataset with 2 workers
 * (walk + archive, CPU of all threads / peak RSS): 16 slots 1.99-2.09 s / 176-184 MiB, 8 slots
 * 1.83-1.89 s / 165-168 MiB, 6 slots 1.81-1.88 s / 162 MiB, the wall time no different; with
 * a fresh buffer per block, 6 in flight had been much slower than 16.
 */
const slotsFor = (workers: number) => Math.max(8, 3 * workers);

export interface ArchiveOptions {
  jobDir: string;
  /**
   * What to archive, parents before children: the walk itself (walkJob, streamed: each
   * entry's outcome goes back to it, tar-writer.ts) or a list of its entries.
   */
  entries: Iterable<WalkEntry> | AsyncIterable<WalkEntry>;
  followSymlinks?: boolean;
  /** Extended attributes and ACLs by path (listXattrs or scanXattrs in xattr-scan.ts); none when absent. */
  xattrs?: XattrLookup;
  /** An entry left out, or archived incomplete, since the scan (tar-writer.ts); the archive stays valid. */
  onSkip?: (skipped: ArchiveSkip) => void;
  /** The X25519 public key the archive is encrypted to. */
  recipient: Uint8Array;
  /** Where the finished archive goes; it appears there only complete. */
  outPath: string;
  /**
   * Stops the archive wherever it is, until it is renamed into place: while the entries are
   * read, and after (the frames still compressed, sealed and written, the fsync).
   */
  signal?: AbortSignal;
  /** Called with the tar bytes produced so far (source bytes plus headers). */
  onProgress?: (tarBytes: number) => void;
  /**
   * Called with the archive bytes written so far to `<outPath>.part` (sealed: they do not
   * change again), so an upload can read them while the archive grows (src/scout/upload/).
   */
  onWritten?: (bytes: number) => void;
  /**
   * Called once every byte of the archive is written (its size and SHA-256 known), before the
   * file is fsynced and renamed into place: an upload reading it may finish meanwhile.
   */
  onSealed?: (end: { size: number; sha256: string }) => void;
}

export interface ArchiveResult {
  size: number;
  sha256: string;
  /** Entries not in the archive as scanned, in archive order (what onSkip reported). */
  skipped: ArchiveSkip[];
}

/** Something to wait for: the next event of the workers (a frame sealed, a failure). */
function events() {
  const waiting: (() => void)[] = [];
  return {
    notify: () => {
      for (const wake of waiting.splice(0)) wake();
    },
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

/**
 * One streaming pass, on every core: this thread walks the entries and reads them as tar
 * (pax: modes, mtimes and owners; tar-writer.ts) straight into 1 MiB blocks; zstd worker
 * threads turn each block into one level-3 frame (zstd-workers.ts); a sealing worker
 * encrypts the frames in order with age to the Scout key, hashes and writes them
 * (seal-worker.ts) into a `.part` file, fsynced and renamed into place when complete.
 * The blocks and frames are a fixed pool of slots (block-pool.ts) that travel reader → zstd
 * worker → sealing worker → reader, transferred, never allocated per block; memory stays
 * bounded by that pool whatever the archive size.
 */
export async function writeArchive(options: ArchiveOptions): Promise<ArchiveResult> {
  const { signal } = options;
  signal?.throwIfAborted();
  const partPath = `${options.outPath}.part`;
  const { header, payloadKey } = newHeader(options.recipient);
  const changed = events();
  let failure: Error | null = null;
  const onFailure = (error: Error) => {
    failure ??= error;
    changed.notify();
  };
  // The tar writer looks at the signal before each entry and read; once the last entry is
  // read, the frames in flight, their sealing and the fsync still take a while: an abort
  // then ends the wait for the workers like their own failure does.
  const onAbort = () => onFailure(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const channels = Array.from({ length: Math.max(2, availableParallelism()) }, () => new MessageChannel());
  const pool = new BlockPool({
    count: slotsFor(channels.length),
    blockSize: BLOCK,
    frameSize: frameBound(BLOCK),
  });
  let handle: FileHandle | null = null;
  let zstd: ZstdWorkers | null = null;
  let sealer: SealWorker | null = null;
  let complete = false;
  const skipped: ArchiveSkip[] = [];
  try {
    handle = await open(partPath, 'w');
    zstd = new ZstdWorkers({ level: 3, frames: channels.map((c) => c.port1), onFailure });
    sealer = new SealWorker({
      fd: handle.fd,
      header,
      payloadKey,
      frames: channels.map((c) => c.port2),
      onSealed: (_count, slot, written) => {
        pool.give(slot);
        options.onWritten?.(written);
        changed.notify();
      },
      onFailure,
    });
    const workers = zstd;
    const nextSlot = async (): Promise<Slot> => {
      for (;;) {
        if (failure) throw failure;
        const slot = pool.take();
        if (slot) return slot;
        await changed.next();
      }
    };
    const filler: BlockFiller = new BlockFiller(await nextSlot(), async (slot, length) => {
      workers.compress(slot, length);
      options.onProgress?.(filler.total);
      return nextSlot();
    });
    await writeTar(options.jobDir, options.entries, filler, {
      signal,
      onSkip: (entry) => {
        skipped.push(entry);
        options.onSkip?.(entry);
      },
      followSymlinks: options.followSymlinks,
      xattrs: options.xattrs,
    });
    pool.give(await filler.end());
    // A zstd worker that fails after the last block was handed over would leave the sealer
    // waiting for a frame that never comes: its failure ends the wait too.
    const failed = (async () => {
      while (!failure) await changed.next();
      throw failure;
    })();
    const result = await Promise.race([sealer.end(workers.count), failed]);
    signal?.throwIfAborted();
    options.onSealed?.({ size: result.size, sha256: result.sha256 });
    await handle.sync();
    await handle.close();
    handle = null;
    pool.release();
    signal?.throwIfAborted();
    await rename(partPath, options.outPath);
    complete = true;
    return { ...result, skipped };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // Stop the workers before closing the file they write; an archive not renamed into place is removed.
    await Promise.all([zstd?.close(), sealer?.close()]);
    if (!complete) {
      await handle?.close().catch(() => {});
      await rm(partPath, { force: true });
    }
    for (const channel of channels) {
      channel.port1.close();
      channel.port2.close();
    }
    pool.release();
  }
}
