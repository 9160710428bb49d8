import { clock } from '../clock.ts';

/**
 * Counts events per key in a sliding window. `retryAfterSeconds` says how long until the
 * oldest counted event ages out once the limit is reached (0 while under it).
 */
export class SlidingWindowLimiter {
  private readonly events = new Map<string, number[]>();
  private readonly limit: number;
  private readonly windowMs: number;

  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  private live(key: string, now: number): number[] {
    const list = (this.events.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length === 0) this.events.delete(key);
    else this.events.set(key, list);
    return list;
  }

  retryAfterSeconds(key: string): number {
    const now = clock.now();
    const list = this.live(key, now);
    if (list.length < this.limit) return 0;
    const oldest = list[list.length - this.limit] ?? now;
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  /** Counts one event now; returns its time, which `forget` takes to take it back. */
  record(key: string): number {
    const now = clock.now();
    const list = this.live(key, now);
    list.push(now);
    this.events.set(key, list);
    if (this.events.size > 10_000) this.sweep(now);
    return now;
  }

  /** Takes back one event recorded at `at` (an attempt that turned out not to count). */
  forget(key: string, at: number): void {
    const list = this.events.get(key);
    const index = list?.lastIndexOf(at) ?? -1;
    if (!list || index < 0) return;
    list.splice(index, 1);
    if (list.length === 0) this.events.delete(key);
  }

  reset(key: string): void {
    this.events.delete(key);
  }

  private sweep(now: number): void {
    for (const key of [...this.events.keys()]) this.live(key, now);
  }
}

/** One limiter and the key an attempt is counted under. */
export type Slot = readonly [limiter: SlidingWindowLimiter, key: string];

/**
 * Counts an attempt under every slot at once, or under none: when any slot is at its limit,
 * returns the longest wait and which slot it was; else `release` takes the attempt back.
 * Nothing here awaits, so concurrent requests cannot all pass the check before any is counted.
 */
export function reserve(
  slots: readonly Slot[],
): { wait: number; blockedBy: number; release?: undefined } | { wait: 0; release: () => void } {
  let wait = 0;
  let blockedBy = -1;
  slots.forEach(([limiter, key], i) => {
    const slotWait = limiter.retryAfterSeconds(key);
    if (slotWait > wait) {
      wait = slotWait;
      blockedBy = i;
    }
  });
  if (wait > 0) return { wait, blockedBy };
  const times = slots.map(([limiter, key]) => limiter.record(key));
  return {
    wait: 0,
    release: () => {
      slots.forEach(([limiter, key], i) => {
        limiter.forget(key, times[i] ?? 0);
      });
    },
  };
}

/** A fixed-window counter: cheap enough to run on every API request. */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly limit: number;
  private readonly windowMs: number;

  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  /** Counts one request; returns 0 when allowed, else the seconds until the window resets. */
  hit(key: string): number {
    const now = clock.now();
    let window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return 0;
    return Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) {
      if (now >= window.start + this.windowMs) this.windows.delete(key);
    }
  }
}
