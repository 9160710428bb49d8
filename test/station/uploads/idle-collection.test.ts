// The Station's idle collection (src/station/idle-collection.ts): V8's memory reducer is off,
// and one thorough collection runs once the data path has been quiet for QUIET_MS, if the heap
// grew. Timers and clock are the test's own (nothing sleeps).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createIdleCollector, GROWTH_BYTES, QUIET_MS } from '../../../src/station/idle-collection.ts';

const MIB = 1024 * 1024;

/** A clock and timers the test moves: `advance` runs each timer that falls due, in order. */
function fakeTime() {
  let now = 0;
  let timers: { at: number; run: () => void }[] = [];
  return {
    now: () => now,
    schedule(run: () => void, ms: number) {
      timers.push({ at: now + ms, run });
      return {};
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers = timers.filter((t) => t !== due);
        now = due.at;
        due.run();
      }
      now = end;
    },
    pending: () => timers.length,
  };
}

function collectorUnderTest(heap: { bytes: number }) {
  const time = fakeTime();
  let collections = 0;
  const note = createIdleCollector(
    () => {
      collections += 1;
      heap.bytes = 30 * MIB;
    },
    { size: () => heap.bytes, now: time.now, schedule: time.schedule },
  );
  return { time, note, collections: () => collections };
}

describe('idle collection', () => {
  test('never collects while an upload goes on (a chunk every 1.4 s for a minute), once when it has been quiet', () => {
    const heap = { bytes: 30 * MIB };
    const { time, note, collections } = collectorUnderTest(heap);
    for (let s = 0; s < 60; s += 1.4) {
      note();
      heap.bytes += 1 * MIB;
      time.advance(1400);
    }
    assert.equal(collections(), 0, 'no collection while bytes keep arriving');
    // At most one timer waits at any time: a note costs no timer of its own.
    assert.equal(time.pending(), 1);
    time.advance(QUIET_MS);
    assert.equal(collections(), 1, 'one collection once the data path is quiet');
    time.advance(10 * QUIET_MS);
    assert.equal(collections(), 1, 'and no more without new activity');
    assert.equal(time.pending(), 0, 'nothing is scheduled while nothing happens');
  });

  test('a quiet Station whose heap did not grow (health checks, a small request) does not collect', () => {
    const heap = { bytes: 30 * MIB };
    const { time, note, collections } = collectorUnderTest(heap);
    note();
    heap.bytes += GROWTH_BYTES - 1;
    time.advance(QUIET_MS);
    assert.equal(collections(), 0);
    note();
    heap.bytes += 1;
    time.advance(QUIET_MS);
    assert.equal(collections(), 1);
  });

  test('the collection waits QUIET_MS from the last activity, not from the first', () => {
    const heap = { bytes: 30 * MIB };
    const { time, note, collections } = collectorUnderTest(heap);
    note();
    heap.bytes += GROWTH_BYTES;
    time.advance(QUIET_MS - 1);
    note();
    time.advance(QUIET_MS - 1);
    assert.equal(collections(), 0);
    time.advance(1);
    assert.equal(collections(), 1);
  });
});
