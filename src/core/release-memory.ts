import { type Collect, collector } from './garbage-collector.ts';

/**
 * Memory freed now instead of at some later garbage collection: a Buffer's ArrayBuffer
 * transferred to length 0 (detached), which returns its bytes to the allocator at once. The
 * data paths make thousands of short-lived buffers per GiB (socket reads, zstd output, sealed
 * pieces) that nothing else views; waiting for the collector held tens of MiB of them, and an
 * idle process runs no collection at all.
 */
type Transferable = ArrayBuffer & { transfer(length: number): ArrayBuffer };

/** Whether `bytes` is the whole of its own ArrayBuffer (so nothing else can view it). */
export const ownsMemory = (bytes: Buffer): boolean =>
  bytes.byteOffset === 0 && bytes.length === bytes.buffer.byteLength;

/** Frees `bytes`' memory now (detaching it); only for a buffer nothing else still views. */
export const releaseNow = (bytes: Buffer): void => {
  (bytes.buffer as Transferable).transfer(0);
};

/**
 * Hands the memory that glibc's malloc holds free back to the system: the pages inside free
 * chunks of every arena, main and per-thread (the threads of an archive or a restore leave
 * their arenas full of freed blocks that glibc keeps, and only malloc_trim gives back). Node
 * has no call for it and the Scout has no native addon, so it goes through SQLite's extension
 * loader (node:sqlite, built in): `loadExtension(file, entry)` dlopens the file and calls
 * `entry(db, &errorMessage, api)`; with glibc's libc.so.6 (already loaded: dlopen finds it by
 * its soname) and `malloc_trim` as the entry, that calls `malloc_trim(pad)` with the database's
 * address as `pad`. malloc_trim releases the whole pages of every free chunk in every arena
 * whatever `pad` is, and only the top of the main arena by `pad` less (so, here, not at all:
 * glibc trims that top itself when a free leaves more than its trim threshold). It answers 1
 * when it released something, which SQLite reports as a failed extension: that is success here.
 * Measured: a Scout idle at 233 MiB after five backups went to 149 MiB on malloc_trim (issue
 * #27). Anywhere else (not Linux, musl, no such symbol) it does nothing, and stops trying.
 */
let trimmer: { loadExtension(file: string, entry: string): void; close(): void } | null | undefined;

/** Returns malloc's free memory to the system (see above); answers whether it released any. */
export function returnFreedMemory(): boolean {
  if (trimmer === null || process.platform !== 'linux') return false;
  try {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
    trimmer ??= new DatabaseSync(':memory:', { allowExtension: true });
    trimmer.loadExtension('libc.so.6', 'malloc_trim');
    // Answered 0 (nothing released): SQLite now holds libc as a loaded extension; closing the
    // database lets it go again.
    trimmer.close();
    trimmer = undefined;
    return false;
  } catch (error) {
    if (/during initialization/i.test((error as Error).message)) return true;
    trimmer?.close();
    trimmer = null;
    return false;
  }
}

let thorough: Collect | null | undefined;

/** How much of V8's shared page pool `releaseAfterWork` takes back (see `takeBackPooledPages`). */
const POOL_TAKEN_BACK = 16 * 2 ** 20;

/**
 * When a worker thread ends, V8 (13.6 in Node 24: `PagePool::ReleaseOnTearDown` in its heap)
 * moves the pages of its isolate's heap into a page pool shared by the process and unmaps them
 * only 8 s later, from a task it posts to another isolate; ~5 MiB per thread. The Scout's
 * operations end theirs last (an archive's two zstd workers and its sealing worker, a
 * restore's threads), so for 8 s after each ~15 MiB of emptied heap pages stayed resident
 * (seen in smaps: 60 pages of 256 KiB unmapped 8 s after a backup, `--trace-gc-nvp` "Removed
 * 21 pages from the shared pool" for each worker). A heap that grows takes its new pages from
 * that pool first, and a memory-reducing collection unmaps the pages it empties at once:
 * ~`POOL_TAKEN_BACK` of short arrays, kept until the last is made, grow the old generation
 * onto the pooled pages, and the collection after this gives them back. If the pool
 * was emptier, the rest are new pages, unmapped by the same collection. Measured on the Scout
 * (bench sequence: backup, own restore, four backups, RSS 3 s later; A/B pairs): idle 0.25 GiB
 * 133 -> 121 MiB, 1 GiB 144 -> 131 MiB; peak and backup CPU no different; ~15 ms more per
 * call (30-35 ms in all).
 */
function takeBackPooledPages(): void {
  const elements = 2048;
  const keep: number[][] = [];
  for (let bytes = 0; bytes < POOL_TAKEN_BACK; bytes += elements * 8) keep.push(new Array(elements).fill(0));
}

/**
 * After a burst of work that made much garbage and used other threads (the Scout's backups and
 * restores): V8's most thorough full collection (the heap's dead buffers and objects freed, its
 * pages compacted and new space shrunk; garbage-collector.ts), then returnFreedMemory for what
 * that and the work's threads freed into malloc. Without the collection, dead buffers would
 * wait in the heap for a collection an idle process may not run. Measured on the Scout (0.25
 * GiB and 1 GiB bench datasets, idle 3 s after five backups): V8 heap 33-34 -> 21 MiB
 * committed, idle RSS 154-162 -> 142-145 MiB and 166 -> 156 MiB, backup CPU no different.
 * Just before it, the heap grows onto the pages V8 still pools from the work's ended threads,
 * so that the collection gives them back at once (`takeBackPooledPages`): the arrays filled
 * there move to the old generation while they are allocated (the young one is small) and are
 * garbage by the time of the collection.
 */
export function releaseAfterWork(): void {
  thorough ??= collector('major', 'last-resort');
  if (thorough) {
    takeBackPooledPages();
    thorough();
  }
  returnFreedMemory();
}
