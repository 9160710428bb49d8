import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { collector } from '../core/garbage-collector.ts';

/** After this long without a byte received or sent, the Station collects once (if its heap grew). */
export const QUIET_MS = 10_000;
/** The heap must have grown by this much since the last collection for a quiet one to run. */
export const GROWTH_BYTES = 8 * 1024 * 1024;

/**
 * Why the Station collects its heap when the data path goes quiet, instead of V8's memory
 * reducer. The reducer starts ~8 s after a full collection (start-up makes several) and runs
 * two more full collections whenever the JavaScript heap allocates slowly, which is how an
 * upload looks from inside V8: a chunk's bytes go straight from the socket into the store's
 * reused blocks (src/station/storage/write-batches.ts), and a streamed upload leaves the
 * Station waiting between chunks while the Scout archives. So the reducer collected in the
 * middle of the first upload after a start and of every slow upload. Measured (issue #27 item 5,
 * A/B pairs on a 2-core virtual machine): 896 MiB in 32 MiB chunks 1.4 s apart (the million-file
 * bench's pace) 1.41–1.46 CPU-s with the reducer, 1.25–1.36 with this; 256 MiB 1.2 s apart
 * 0.60–0.68 against 0.43–0.53, and the heap at rest as small (~32 MiB held). It is turned off
 * (`--memory-reducer-gc-count=0`: it never starts a collection; the flag is read when it
 * would) and its work is done here: QUIET_MS after the last byte of the data path, one
 * thorough full collection (its heap compacted and shrunk, as the reducer's), only if the heap
 * grew by GROWTH_BYTES since the last one, so an idle Station answering health checks never
 * collects.
 */
export function turnOffMemoryReducer(): void {
  setFlagsFromString('--memory-reducer-gc-count=0');
}

/** Size of the heap V8 holds (committed), the measure of growth. */
const heapBytes = (): number => getHeapStatistics().total_heap_size;

/**
 * A note of activity: a collection (`collect`) runs once QUIET_MS passed since the last note,
 * if the heap (`size`) grew by GROWTH_BYTES since the last collection. `schedule` and `now`
 * are the timers and clock (tests move them).
 */
export function createIdleCollector(
  collect: () => void,
  options: {
    size?: () => number;
    now?: () => number;
    schedule?: (run: () => void, ms: number) => { unref?: () => unknown };
  } = {},
) {
  const size = options.size ?? heapBytes;
  const now = options.now ?? (() => performance.now());
  const schedule = options.schedule ?? setTimeout;
  let last = 0;
  let armed = false;
  let baseline = size();

  function check(): void {
    const waited = now() - last;
    if (waited < QUIET_MS) {
      arm(QUIET_MS - waited);
      return;
    }
    armed = false;
    if (size() < baseline + GROWTH_BYTES) return;
    collect();
    baseline = size();
  }

  function arm(ms: number): void {
    armed = true;
    schedule(check, ms).unref?.();
  }

  return function noteActivity(): void {
    last = now();
    if (!armed) arm(QUIET_MS);
  };
}

let thorough: (() => void) | null | undefined;

/** The Station's idle collector with V8's most thorough full collection (src/core/garbage-collector.ts). */
export const noteActivity = createIdleCollector(() => {
  thorough ??= collector('major', 'last-resort');
  thorough?.();
});
