// The Station's garbage-collector pacing (src/station/gc-pacing.ts): a young-generation
// collection after every 8 MiB received into uploads, with V8's own collector.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createReceivePacer,
  RECEIVED_BYTES_PER_YOUNG_GC,
  youngCollector,
} from '../../../src/station/gc-pacing.ts';

describe('garbage-collector pacing', () => {
  test('a young collection runs after every 8 MiB received, counted across pieces', () => {
    let runs = 0;
    const note = createReceivePacer(() => () => {
      runs += 1;
    });
    for (let i = 0; i < 8 * 16; i += 1) note(64 * 1024);
    assert.equal(runs, 1);
    note(RECEIVED_BYTES_PER_YOUNG_GC - 1);
    assert.equal(runs, 1);
    note(1);
    assert.equal(runs, 2);
  });

  test("V8's young collector is reachable without --expose-gc, and only for the pacer", () => {
    const collect = youngCollector();
    assert.equal(typeof collect, 'function');
    collect?.();
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
  });
});
