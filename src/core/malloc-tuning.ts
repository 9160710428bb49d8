import { logger } from './log.ts';
import { isSingleExecutable } from './single-executable.ts';

/**
 * glibc's malloc settings for a long-running Station or Scout. By default glibc raises its mmap
 * threshold to the largest block freed so far (up to 32 MiB) and then keeps up to twice that
 * of free memory: one scrypt at sign-in (16 MiB) is enough, and from then on the 64 KiB
 * buffers every upload's socket reads land in stay with the process. Measured through a
 * 4 GiB upload: resident memory climbing 164 → 301 MiB by default, 158 → 242 MiB (peak 255)
 * with these fixed, at no measurable CPU cost (fixing the threshold at 64 KiB instead cost
 * ~0.7 CPU-s per GiB in page faults).
 */
export const MALLOC_TUNABLES =
  'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=1048576:glibc.malloc.arena_max=2';

/**
 * glibc reads its tunables only when a process starts, so a Station started without them
 * replaces itself (same process id, same arguments and streams) by one started with them.
 * Nothing happens when GLIBC_TUNABLES is already set (the operator's choice wins), on a
 * platform without `process.execve`, or in the single executable (its unit file sets them);
 * when the restart fails the Station runs on with glibc's defaults.
 */
export function restartWithMallocTunables(): void {
  if (process.env.GLIBC_TUNABLES !== undefined || process.platform !== 'linux') return;
  if (typeof process.execve !== 'function' || isSingleExecutable()) return;
  const script = process.argv[1];
  if (!script) return;
  try {
    process.execve(
      process.execPath,
      [process.execPath, ...process.execArgv, script, ...process.argv.slice(2)],
      { ...process.env, GLIBC_TUNABLES: MALLOC_TUNABLES },
    );
  } catch (error) {
    // Only memory is at stake: run on with glibc's defaults.
    logger.warn({ err: error }, 'could not restart with the malloc tunables; running without them');
  }
}
