import type { ResourceLimits } from 'node:worker_threads';

/**
 * The heap of each archive worker thread (zstd-workers.ts, seal-worker.ts). Their blocks are
 * ArrayBuffers outside the heap (block-pool.ts) and what they keep on it is a few small
 * objects per message, so a small heap is plenty; the default would let each grow like the
 * main thread's before collecting.
 */
export const WORKER_HEAP: ResourceLimits = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 16 };
