import { useEffect, useRef, useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { ScoutStatus } from '../../src/shared/protocol/scout-status.ts';
import { api } from '../common/api.ts';
import { type Polled, usePoll } from '../common/poll.ts';

/** How often the console refreshes: every 15 s when idle, every 2.5 s while work runs. */
export const IDLE_MS = 15_000;
export const ACTIVE_MS = 2_500;

export function isBusy(status: ScoutStatus | null): boolean {
  return Boolean(
    status && (status.operation || status.run_now_requested || status.scheduler.state !== 'idle'),
  );
}

export interface StatusPoll extends Polled<ScoutStatus> {
  busy: boolean;
  /** The refresh interval every poll on the page should use now. */
  interval: number;
}

/** GET /api/status, polled faster while an operation runs. */
export function useScoutStatus(): StatusPoll {
  const [fast, setFast] = useState(false);
  const polled = usePoll(() => api.get<ScoutStatus>(scoutPaths.status), fast ? ACTIVE_MS : IDLE_MS);
  const busy = isBusy(polled.data);
  useEffect(() => setFast(busy), [busy]);
  return { ...polled, busy, interval: busy ? ACTIVE_MS : IDLE_MS };
}

/** Calls `onIdle` when work that was running ends (the moment job states change). */
export function useWhenIdle(busy: boolean, onIdle: () => void): void {
  const was = useRef(busy);
  const callback = useRef(onIdle);
  callback.current = onIdle;
  useEffect(() => {
    if (was.current && !busy) callback.current();
    was.current = busy;
  }, [busy]);
}
