import { clock } from '../clock.ts';

/**
 * Counts events per key in a sliding window, in this process's memory (the Scout's restore
 * hints). `retryAfterSeconds` says how long until the oldest counted event ages out once the
 * limit is reached (0 while under it).
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

  /** Counts one event now. */
  record(key: string): void {
    const now = clock.now();
    const list = this.live(key, now);
    list.push(now);
    this.events.set(key, list);
    if (this.events.size > 10_000) this.sweep(now);
  }

  private sweep(now: number): void {
    for (const key of [...this.events.keys()]) this.live(key, now);
  }
}

/**
 * Fixed-window counters by key, shared by everything that must hold across processes: a
 * Station on PostgreSQL keeps them in the database (several Stations on one server count
 * together, see station/services/rate-windows.ts); the Scout and a Station on PGlite, one
 * process each, keep them in memory (`MemoryWindows`). A window starts with the first event counted under a key and
 * lasts `windowMs`; the next event after it starts a new one.
 */
export interface WindowCounter {
  /** Adds `delta` to the key's current window; returns the count after and when the window ends (ms). */
  add(key: string, windowMs: number, delta?: number): Promise<{ count: number; windowEnd: number }>;
  /** Takes one event back from the key's window that ends at `windowEnd`, if that is still the current one. */
  takeBack(key: string, windowEnd: number): Promise<void>;
}

/** The Scout's counter (one process): windows in a map, expired ones dropped as it grows. */
export class MemoryWindows implements WindowCounter {
  private readonly windows = new Map<string, { end: number; count: number }>();

  async add(key: string, windowMs: number, delta = 1) {
    const now = clock.now();
    let window = this.windows.get(key);
    if (!window || now >= window.end) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { end: now + windowMs, count: 0 };
      this.windows.set(key, window);
    }
    window.count += delta;
    return { count: window.count, windowEnd: window.end };
  }

  async takeBack(key: string, windowEnd: number) {
    const window = this.windows.get(key);
    if (window?.end === windowEnd) window.count = Math.max(0, window.count - 1);
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now >= window.end) this.windows.delete(key);
  }
}

/**
 * A named limit: at most `limit` events per window of `windowMs`. A limit that `onlyFlags` never
 * refuses an attempt: `reserve` counts it and reports that it is over (the caller decides).
 */
export interface Limit {
  name: string;
  limit: number;
  windowMs: number;
  onlyFlags?: boolean;
}

/** A limit and the key an attempt is counted under. */
export type Slot = readonly [limit: Limit, key: string];

const secondsUntil = (end: number) => Math.max(1, Math.ceil((end - clock.now()) / 1000));

/**
 * Counts one event under `key`; returns 0 when it is within the limit, else the seconds until
 * the window ends (the event is counted either way, as a request that was made).
 */
export async function hit(counter: WindowCounter, limit: Limit, key: string): Promise<number> {
  const { count, windowEnd } = await counter.add(`${limit.name}:${key}`, limit.windowMs);
  return count <= limit.limit ? 0 : secondsUntil(windowEnd);
}

/** A counted attempt: `release` takes it back everywhere; `flagged` lists the flag-only limits it is over. */
export interface Reservation {
  wait: 0;
  release: () => Promise<void>;
  flagged: { limit: Limit; wait: number }[];
}

/**
 * Counts an attempt under every slot, or under none: slot by slot in order, and when one goes
 * over its limit the attempt is taken back from the slots counted so far and the wait is
 * returned with the slot that refused it; else `release` takes the attempt back everywhere
 * (it turned out not to count). Each count is one atomic step in the counter, so concurrent
 * attempts — also on other Stations — cannot all pass before any is counted; and since the
 * first slots refuse first, a flood from one client address never reaches the later, wider
 * slots (one username from all addresses) beyond that address's own limit. A limit that
 * `onlyFlags` is counted but never refuses: the reservation lists it in `flagged` when over.
 */
export async function reserve(
  counter: WindowCounter,
  slots: readonly Slot[],
): Promise<{ wait: number; blockedBy: number; release?: undefined } | Reservation> {
  const counted: { key: string; windowEnd: number }[] = [];
  const flagged: Reservation['flagged'] = [];
  const release = async () => {
    await Promise.all(counted.map((c) => counter.takeBack(c.key, c.windowEnd)));
  };
  try {
    for (const [i, [limit, key]] of slots.entries()) {
      const slotKey = `${limit.name}:${key}`;
      const { count, windowEnd } = await counter.add(slotKey, limit.windowMs);
      counted.push({ key: slotKey, windowEnd });
      if (count <= limit.limit) continue;
      if (limit.onlyFlags) {
        flagged.push({ limit, wait: secondsUntil(windowEnd) });
        continue;
      }
      await release();
      return { wait: secondsUntil(windowEnd), blockedBy: i };
    }
  } catch (error) {
    // A counter that fails half-way (the database gone) must not leave an attempt counted.
    await release().catch(() => {});
    throw error;
  }
  return { wait: 0, release, flagged };
}
