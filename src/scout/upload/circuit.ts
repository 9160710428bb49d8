import { clock } from '../../core/clock.ts';
import type { UploadCircuitView } from '../../shared/protocol/scout-status.ts';

export const OPEN_AFTER_FAILED_CYCLES = 3;
export const OPEN_FOR_MS = 15 * 60 * 1000;

/**
 * The upload circuit: after 3 cycles in a row that could not reach the Station it opens, and
 * scheduled cycles skip uploads until `retry_at` (half-open: the next cycle tries once).
 * run-now and force-send always try; a success closes it.
 */
export function createCircuit() {
  let failures = 0;
  let openedAt: number | null = null;
  return {
    view(): UploadCircuitView {
      const retryAt = openedAt === null ? null : openedAt + OPEN_FOR_MS;
      const state = retryAt === null ? 'closed' : clock.now() < retryAt ? 'open' : 'half_open';
      return {
        state,
        consecutive_failures: failures,
        retry_at: retryAt === null ? null : new Date(retryAt).toISOString(),
      };
    },
    /** Whether a scheduled cycle should skip uploading. */
    blocksScheduled(): boolean {
      return this.view().state === 'open';
    },
    cycleFailedToReach(): void {
      failures += 1;
      if (failures >= OPEN_AFTER_FAILED_CYCLES) openedAt = clock.now();
    },
    reached(): void {
      failures = 0;
      openedAt = null;
    },
  };
}

export type Circuit = ReturnType<typeof createCircuit>;
