// The default process metrics sample the event loop's delay every EVENT_LOOP_SAMPLE_MS, not at
// prom-client's own 10 ms, which woke an idle Station or Scout 100 times a second (issue #27
// item 5; src/core/http/routes/metrics.ts).
import assert from 'node:assert/strict';
import perfHooks, { type EventLoopMonitorOptions } from 'node:perf_hooks';
import { test } from 'node:test';
import { createMetricsRegistry, EVENT_LOOP_SAMPLE_MS } from '../../src/core/http/routes/metrics.ts';

test('the metrics registry samples the event loop every 100 ms, not 100 times a second', async () => {
  const asked: (number | undefined)[] = [];
  const original = perfHooks.monitorEventLoopDelay;
  perfHooks.monitorEventLoopDelay = (options?: EventLoopMonitorOptions) => {
    asked.push(options?.resolution);
    return original(options);
  };
  let registry: ReturnType<typeof createMetricsRegistry>;
  try {
    registry = createMetricsRegistry();
  } finally {
    perfHooks.monitorEventLoopDelay = original;
  }
  assert.equal(EVENT_LOOP_SAMPLE_MS, 100);
  assert.deepEqual(asked, [EVENT_LOOP_SAMPLE_MS]);
  // The lag families are still there.
  const text = await registry.metrics();
  for (const family of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds'])
    assert.match(text, new RegExp(`^# TYPE ${family} gauge$`, 'm'));
});
