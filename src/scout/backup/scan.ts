import { scanXattrs, type XattrMap } from '../archive/xattr-scan.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { walkJob } from '../jobs/walk.ts';
import { WalkFingerprints } from '../jobs/walk-fingerprints.ts';

/** What the scan's walk found: the fingerprint to announce, the one change detection compares, the bytes. */
export interface Seen {
  fingerprint: string;
  detected: string;
  total: number;
}

/** A scan under way (startScan): its walk's result, the extended attributes, and a way to stop both. */
export interface Scan {
  seen: Promise<Seen>;
  xattrs: () => Promise<XattrMap>;
  done: () => void;
}

/**
 * Starts walking the job for its fingerprint (what a streamed upload announces), its
 * change-detection fingerprint and its size, holding no list of its entries; its extended
 * attributes are listed meanwhile by another process (only an archive needs them: `xattrs()`
 * waits for them). Nothing is awaited here: the archive may start beside the walk (stage.ts).
 * `done()` stops whatever still runs of both.
 */
export function startScan(job: DiscoveredJob, signal: AbortSignal): Scan {
  const stop = new AbortController();
  const config = job.config;
  const both = AbortSignal.any([signal, stop.signal]);
  const listing = config
    ? scanXattrs(job.absolute_path, { followSymlinks: config.follow_symlinks, signal: both })
    : Promise.resolve(new Map() as XattrMap);
  listing.catch(() => {}); // awaited by xattrs(), or abandoned by done()
  const seen = (async (): Promise<Seen> => {
    if (!config) return { fingerprint: '', detected: '', total: 0 };
    // What change detection compares: with `change_detection: mtimes`, modification times count.
    const mtimes = config.change_detection === 'mtimes';
    const fingerprints = new WalkFingerprints([{}, ...(mtimes ? [{ mtimes }] : [])]);
    let total = 0;
    for await (const entry of walkJob(job.absolute_path, config, { signal: both, fingerprints }))
      if (entry.type === 'file') total += entry.size;
    const [plain = '', withTimes] = fingerprints.digests();
    return { fingerprint: plain, detected: withTimes ?? plain, total };
  })();
  seen.catch(() => stop.abort()); // awaited by the cycle; a failed walk stops the listing too
  return { seen, xattrs: () => listing, done: () => stop.abort() };
}
