/**
 * The restore requests made in this browser. The Station's management API has no route
 * that lists restore requests (only the target Scout can list its own), so the Restore
 * requests page falls back to this record when `GET /api/restore-requests` is not there.
 */
import type { RestoreRequest } from './types.ts';

const KEY = 'backupd.station.restore-requests';
const KEEP = 100;
export const REQUEST_LIFETIME_MS = 60 * 60 * 1000;

export interface LoggedRequest extends RestoreRequest {
  notified: boolean;
}

export function loggedRequests(): LoggedRequest[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return Array.isArray(parsed) ? (parsed as LoggedRequest[]) : [];
  } catch {
    return [];
  }
}

export function logRequest(request: RestoreRequest, notified: boolean): void {
  const kept = loggedRequests().filter((r) => r.id !== request.id);
  try {
    localStorage.setItem(KEY, JSON.stringify([{ ...request, notified }, ...kept].slice(0, KEEP)));
  } catch {
    // Storage full or disabled: the request exists on the Station all the same.
  }
}

/** A request that is neither completed nor rejected reads `expired` one hour after creation. */
export function effectiveStatus(request: RestoreRequest, now = Date.now()): string {
  const final = request.status === 'completed' || request.status === 'rejected';
  const expiresAt = request.expires_at
    ? Date.parse(request.expires_at)
    : Date.parse(request.created_at) + REQUEST_LIFETIME_MS;
  return !final && now >= expiresAt ? 'expired' : request.status;
}
