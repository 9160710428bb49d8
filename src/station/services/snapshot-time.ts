import { clock, DAY_MS } from '../../core/clock.ts';
import { badRequest } from '../../core/errors.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import { parseSnapshotName } from '../../shared/protocol/snapshot-names.ts';

/** How far ahead of the Station's clock a snapshot's `timestamp` may lie (clock skew). */
export const MAX_AHEAD_MS = DAY_MS;

/** `YYYY-MM-DDTHH:MM:SSZ` as milliseconds. */
export function timestampMs(timestamp: string): number {
  return Date.parse(timestamp);
}

/**
 * Refuses a snapshot time too far in the future: a Scout whose clock runs ahead (or a
 * compromised one) would otherwise make its snapshot "latest" and push out real history.
 */
export function checkNotAhead(timestamp: string, now = clock.now()): void {
  const ms = timestampMs(timestamp);
  if (ms - now > MAX_AHEAD_MS) {
    throw badRequest(
      `timestamp ${timestamp} is more than 24 hours ahead of the Station's clock (${utcSecond(now)}); check the Scout's clock`,
    );
  }
}

/** The time in `<job>__<YYYY-MM-DDTHH-MM-SSZ>__<fp8>[-n].tar.zst`, or null for other names. */
export function timeFromName(filename: string): number | null {
  return parseSnapshotName(filename)?.takenAt ?? null;
}
