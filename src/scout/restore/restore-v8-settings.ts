import { setFlagsFromString } from 'node:v8';
import { TIGHT_OLD_GENERATION } from '../old-generation.ts';
import { keepYoungGenerationSmall } from '../young-generation.ts';

/**
 * Room for V8's old generation to grow to 2.5× what survived the last full collection before
 * the next one starts, instead of V8's ~2×. A restore's heap stays small (12–14 MiB live at 1
 * GiB in the CLI, ~20 in the Scout), so V8's limit left ~12 MiB of room, less than the young
 * generation may promote, and V8 began incremental marking again right after each full
 * collection (`--trace-incremental-marking`: started at 12 of 24 MiB): 52 full collections in
 * a 1 GiB restore, their marking on V8's helper threads 1.1–1.8 CPU-s. With 4× (300): 16, the
 * helper threads 0.24–0.58 CPU-s. But the heap then commits what it may grow to and keeps it:
 * a million small files restored by the CLI peaked at 204 MiB (main heap 15 MiB live, 46–50
 * committed), over its 200 MiB line; with 2.5× (150) 186 MiB, and a 1 GiB restore's CPU the
 * same (4.48 / 4.83 → 4.65 / 4.87 CPU-s, 166 MiB either way; loaded machine). V8 reads the
 * factor at each collection, so it can be set and reset while running.
 */
export const ROOMY = '--heap-growing-percent=150';

/**
 * The V8 settings of `backupd scout restore` (src/cli/scout-restore.ts), set at its start: a
 * young generation kept small (src/scout/young-generation.ts) and the room above for the
 * whole run. 1 GiB dataset from a Station, 3 paired runs (per-thread CPU from /proc): V8's
 * helper threads 1.12–1.32 → 0.55–0.58 CPU-s, main thread 2.60–2.85 → 2.40–2.58, peak RSS
 * 184–188 → 183–193 MiB; 100,000 small files: 150 → 151 MiB.
 */
export function applyRestoreV8Settings(setFlags: (flags: string) => void = setFlagsFromString): void {
  keepYoungGenerationSmall();
  setFlags(ROOMY);
}

/**
 * A wrapper that gives the room above to the runs it wraps: the first run in sets it, the last
 * one out (whether it ended or failed) sets the Scout's own room back (src/scout/old-generation.ts).
 */
export function roomForRuns(setFlags: (flags: string) => void) {
  let running = 0;
  return async function withRoom<T>(run: () => Promise<T>): Promise<T> {
    running += 1;
    if (running === 1) setFlags(ROOMY);
    try {
      return await run();
    } finally {
      running -= 1;
      if (running === 0) setFlags(TIGHT_OLD_GENERATION);
    }
  };
}

/**
 * The room above while the Scout's own restores run (src/scout/restore/restore-service.ts),
 * back to the Scout's own room when the last one ends (src/scout/old-generation.ts). 1 GiB
 * dataset, the own restore into the job folder (all unchanged), 3 paired runs: V8's helper
 * threads 1.31–1.78 → 0.24–0.27 CPU-s, main thread 3.00–3.22 → 2.71–2.92, wall 7.2–11.6 →
 * 4.4–6.4 s (loaded machine), Scout peak 184–204 → 185–202 MiB.
 */
export const withRoomForOldGeneration = roomForRuns(setFlagsFromString);
