// Long walks over big trees share the event loop with a server: they give it a turn once
// they have held it for a while, and stop promptly when their signal aborts.
import { setImmediate as nextTurn } from 'node:timers/promises';

const MAX_BUSY_MS = 20;

export interface Pacer {
  /** Throws the abort reason; true when the event loop is due a turn. Costs no promise. */
  due(): boolean;
  /** Gives the event loop its turn. */
  rest(): Promise<void>;
}

/** Use as `if (pacer.due()) await pacer.rest();` inside every long loop. */
export function createPacer(signal?: AbortSignal): Pacer {
  let since = performance.now();
  return {
    due() {
      signal?.throwIfAborted();
      return performance.now() - since >= MAX_BUSY_MS;
    },
    async rest() {
      await nextTurn();
      signal?.throwIfAborted();
      since = performance.now();
    },
  };
}
