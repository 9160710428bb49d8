// Long walks over big trees share the event loop with a server: they give it a turn once
// they have held it for a while, and stop promptly when their signal aborts.
import { setImmediate as nextTurn } from 'node:timers/promises';

const MAX_BUSY_MS = 20;

/** Returns a function to `await` often: it throws the abort reason, and yields when due. */
export function createPacer(signal?: AbortSignal): () => Promise<void> {
  let since = performance.now();
  return async () => {
    signal?.throwIfAborted();
    if (performance.now() - since < MAX_BUSY_MS) return;
    await nextTurn();
    signal?.throwIfAborted();
    since = performance.now();
  };
}
