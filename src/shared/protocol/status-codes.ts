/**
 * What the Station's `/backup/*` status codes mean to a Scout, and whether trying again within
 * the same operation can help (`retry`). 0 stands for "no answer" (unreachable, TLS, timeout).
 * The Scout's one error mapping (src/scout/upload/station-errors.ts) reads this table.
 */
export interface StationStatusMeaning {
  /** Retry within the operation (with backoff, honouring Retry-After). */
  retry: boolean;
  /** The operator needs to act (a token, a limit); a retry alone will not fix it. */
  attention: boolean;
  meaning: string;
}

export const STATION_STATUS_MEANINGS: Record<number, StationStatusMeaning> = {
  0: { retry: true, attention: false, meaning: 'the Station could not be reached' },
  400: { retry: false, attention: false, meaning: 'the Station refused a field of the request' },
  401: { retry: false, attention: true, meaning: 'the Station refused the Station token' },
  403: { retry: false, attention: true, meaning: 'the Station token may not act for this Scout instance' },
  404: { retry: false, attention: false, meaning: 'the Station has no such upload, snapshot or request' },
  409: { retry: false, attention: true, meaning: 'the request conflicts with what the Station holds' },
  413: { retry: false, attention: true, meaning: 'the archive is larger than the Station accepts' },
  416: { retry: false, attention: false, meaning: 'the byte range lies outside the snapshot' },
  429: { retry: true, attention: false, meaning: 'the Station asks to slow down (Retry-After)' },
  500: { retry: true, attention: false, meaning: 'the Station failed' },
  502: { retry: true, attention: false, meaning: 'a proxy in front of the Station failed' },
  503: {
    retry: false,
    attention: false,
    meaning: 'the Station does not accept uploads now (paused or storage unavailable)',
  },
  504: { retry: true, attention: false, meaning: 'a proxy in front of the Station timed out' },
  507: { retry: false, attention: true, meaning: 'the Station is out of disk space' },
};

/** The meaning of any status, falling back to its class. */
export function stationStatusMeaning(status: number): StationStatusMeaning {
  return (
    STATION_STATUS_MEANINGS[status] ??
    (status >= 500
      ? { retry: false, attention: false, meaning: `the Station answered ${status}` }
      : { retry: false, attention: false, meaning: `the Station refused the request (${status})` })
  );
}
