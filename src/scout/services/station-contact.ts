import { clock } from '../../core/clock.ts';
import type { ErrorCode } from '../../shared/protocol/error-codes.ts';
import type { StationError } from '../upload/station-client.ts';
import { stationFailure } from '../upload/station-errors.ts';

/** The Scout's last contact with its Station, as `GET /api/status` reports it under `station`. */
export interface StationContactView {
  /** Whether the Station answered the last request; null before the first one. */
  reachable: boolean | null;
  /** When that request was made (ISO); null before the first one. */
  checked_at: string | null;
  /** The Scout's code for a refusal (token_rejected, not_bound, …), null when it was accepted. */
  code: ErrorCode | null;
  /** What the refusal said, null when it was accepted. */
  detail: string | null;
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

const NONE: StationContactView = { reachable: null, checked_at: null, code: null, detail: null };

/**
 * Every request the Scout sends to its Station (uploads, restores, drills, restore requests)
 * ends here with its outcome, so the status reports what the Scout itself last saw instead of
 * the console probing. One per process: the Station client records into it.
 */
function createStationContact() {
  let last = NONE;
  /** The Station address outcomes count for (set by reset); null: any. */
  let current: string | null = null;
  return {
    /**
     * A request's outcome: null when the Station accepted it, else its StationError. `base` is
     * the address it went to: once the address changed (reset), a late answer from the old one
     * (a check still waiting on an address that never answered) says nothing about the new one.
     */
    record(error: StationError | null, base?: string): void {
      if (current !== null && base !== undefined && trimmed(base) !== current) return;
      const checked_at = clock.date().toISOString();
      if (!error) {
        last = { reachable: true, checked_at, code: null, detail: null };
        return;
      }
      const failure = stationFailure(error);
      last = { reachable: error.status !== 0, checked_at, code: failure.code, detail: failure.message };
    },
    /** Forgets the last contact (the Station address or token changed to `stationUrl`). */
    reset(stationUrl: string | null = null): void {
      last = NONE;
      current = stationUrl === null ? null : trimmed(stationUrl);
    },
    view: (): StationContactView => last,
  };
}

export const stationContact = createStationContact();
