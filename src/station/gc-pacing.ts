import { setFlagsFromString } from 'node:v8';
import { type Collect, collector } from '../core/garbage-collector.ts';
import { noteActivity, turnOffMemoryReducer } from './idle-collection.ts';

/** A young-generation collection runs after every this many bytes received into uploads. */
export const RECEIVED_BYTES_PER_YOUNG_GC = 8 * 1024 * 1024;

/**
 * Why the Station paces its garbage collector. Node 24's HTTP parser hands every socket read of
 * a request body to JavaScript as a fresh copy (Buffer::Copy in on_body of Node's
 * node_http_parser.cc; no public way to read a body into reused memory), so 1 GiB of upload is
 * ~16,000 short-lived 64 KiB buffers held outside the heap. Their small wrappers fill V8's young
 * generation so slowly (the Station's grows to 32 MiB while PGlite starts) that young
 * collections almost never run; the buffers wait for full collections instead, which V8 started
 * every ~20 MB received (its "old generation space left < new space capacity" rule), each
 * marking the Station's ~30 MB heap. Measured through 2 × 0.25 GiB uploads with the bundle on
 * this machine: V8's marking threads spent 1.7–2.3 CPU-s per GiB, the Station 4.9–5.3 s in all,
 * peak RSS 282–286 MiB. With a young collection after every 8 MiB received (a scavenge of
 * mostly dead objects: about a millisecond) and marking started by how full the old generation
 * is (70 %, at once at 90 %), the marking threads spent 0.24–0.28 s, the Station 2.6–2.9 s,
 * peak RSS 259–263 MiB. Either half alone helped less and cost memory or left the marking.
 * V8's memory reducer is replaced by a collection when the data path goes quiet
 * (src/station/idle-collection.ts).
 */
export function paceGarbageCollection(): void {
  setFlagsFromString('--incremental-marking-soft-trigger=70');
  setFlagsFromString('--incremental-marking-hard-trigger=90');
  turnOffMemoryReducer();
}

/** A young-generation collection (see `collector` in src/core/garbage-collector.ts). */
export const youngCollector = (): Collect | null => collector('minor');

/**
 * A full collection (see `collector` in src/core/garbage-collector.ts), for work that makes much short-lived garbage in batches
 * that outlive young collections, such as start-up's reconcile of 300,000 snapshots: V8 let
 * that garbage grow the heap by ~100 MiB before it collected (live: ~35 MiB).
 */
export const fullCollector = (): Collect | null => collector('major');

/** Counts received bytes and runs `collect` after every RECEIVED_BYTES_PER_YOUNG_GC of them. */
export function createReceivePacer(collect: () => Collect | null) {
  let since = 0;
  let collector: Collect | null | undefined;
  return (bytes: number): void => {
    since += bytes;
    if (since < RECEIVED_BYTES_PER_YOUNG_GC) return;
    since = 0;
    collector ??= collect();
    collector?.();
  };
}

const paceYoung = createReceivePacer(youngCollector);

/**
 * Called by the stores with each piece of an upload they received (all uploads together), and
 * by downloads with each piece sent: paces young collections, and is activity for the idle
 * collection (idle-collection.ts).
 */
export function noteReceived(bytes: number): void {
  paceYoung(bytes);
  noteActivity();
}
