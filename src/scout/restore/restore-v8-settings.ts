import { setFlagsFromString } from 'node:v8';
import { keepYoungGenerationSmall } from '../young-generation.ts';

/**
 * The V8 settings of `backupd scout restore` (src/cli/scout-restore.ts), set at its start: a
 * young generation kept small (src/scout/young-generation.ts), and room for the old generation
 * to grow to 4× what survived the last full collection before the next one starts, instead of
 * V8's ~2×. A restore's heap stays small (12–14 MiB live at 1 GiB), so V8's limit left ~12 MiB
 * of room, less than the young generation may promote, and V8 began incremental marking right
 * after each full collection: 52 full collections in a 1 GiB restore, their marking on V8's
 * helper threads 1.2–1.6 CPU-s of the restore's 6.5–7. With the room: 16 full collections, the
 * helper threads 0.65–0.71 CPU-s, peak RSS unchanged (1 GiB: 182–188 against 176–188 MiB;
 * 100,000 small files: 151 against 150 MiB). Only the restore CLI: the Scout's own limits are
 * its idle memory (src/scout/v8-settings.ts). V8 reads the factor at each collection, so it
 * can be set while running.
 */
export function applyRestoreV8Settings(): void {
  keepYoungGenerationSmall();
  setFlagsFromString('--heap-growing-percent=300');
}
