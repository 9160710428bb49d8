import { listXattrs, type XattrLookup } from '../archive/xattr-scan.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { walkJob } from '../jobs/walk.ts';
import { WalkFingerprints } from '../jobs/walk-fingerprints.ts';

/**
 * What the scan's walk found: the fingerprint to announce, the one change detection compares,
 * the bytes. All three are null when the walk stopped early (see `startScan`'s `wanted`).
 */
export type Seen =
  | { fingerprint: string; detected: string; total: number }
  | { fingerprint: null; detected: null; total: null };

/**
 * A job of many small files is walked once, by its archive, when the archive is wanted
 * whatever the scan finds: its scan walk stops after this many files if they average under
 * `averageBytes`. The scan's only use then is the fingerprint a streamed upload announces
 * (the upload could start while the archive is written), and for small files a walk costs
 * more than the upload it would overlap: on the million-file bench dataset (1.9 KiB a file)
 * the scan's walk took ~10 s of the thread that also reads every file into the archive
 * (lstat 9.7 s there against 4.1 s without it), while the whole 0.9 GiB archive uploads in a
 * few seconds once written. Files of 43 KiB on average (the 1 and 4 GiB datasets) keep the
 * scan, whose walk costs little beside the bytes it lets the upload overlap.
 */
export const SMALL_FILES = { files: 20_000, averageBytes: 8 * 1024 };

/** The walk stopped early: the archive's own walk gives the fingerprint. */
const WALKED_BY_ARCHIVE: Seen = { fingerprint: null, detected: null, total: null };

/** A scan under way (startScan): its walk's result, the extended attributes, and a way to stop both. */
export interface Scan {
  seen: Promise<Seen>;
  /** The extended attributes, listed a part at a time ahead of the archive that asks (xattr-scan.ts). */
  xattrs: XattrLookup;
  done: () => void;
}

/**
 * Starts walking the job for its fingerprint (what a streamed upload announces), its
 * change-detection fingerprint and its size, holding no list of its entries; its extended
 * attributes are listed meanwhile by other processes, a part of the tree at a time ahead of
 * the archive that asks for them (only an archive needs them: `xattrs`). Nothing is awaited
 * here: the archive may start beside the walk (stage.ts).
 * `done()` stops whatever still runs of both. With `wanted` (the archive is made whatever the
 * walk finds), a job of many small files is left to the archive's walk (SMALL_FILES).
 */
export function startScan(job: DiscoveredJob, signal: AbortSignal, options: { wanted?: boolean } = {}): Scan {
  const small = options.wanted ? SMALL_FILES : null;
  const stop = new AbortController();
  const config = job.config;
  const both = AbortSignal.any([signal, stop.signal]);
  const listing: XattrLookup = config
    ? listXattrs(job.absolute_path, { followSymlinks: config.follow_symlinks, signal: both })
    : new Map();
  const seen = (async (): Promise<Seen> => {
    if (!config) return { fingerprint: '', detected: '', total: 0 };
    // What change detection compares: with `change_detection: mtimes`, modification times count.
    const mtimes = config.change_detection === 'mtimes';
    const fingerprints = new WalkFingerprints([{}, ...(mtimes ? [{ mtimes }] : [])]);
    let total = 0;
    let files = 0;
    for await (const entry of walkJob(job.absolute_path, config, { signal: both, fingerprints })) {
      if (entry.type !== 'file') continue;
      total += entry.size;
      files += 1;
      if (small && files === small.files && total < files * small.averageBytes) return WALKED_BY_ARCHIVE;
    }
    const [plain = '', withTimes] = fingerprints.digests();
    return { fingerprint: plain, detected: withTimes ?? plain, total };
  })();
  seen.catch(() => stop.abort()); // awaited by the cycle; a failed walk stops the listing too
  return { seen, xattrs: listing, done: () => stop.abort() };
}
