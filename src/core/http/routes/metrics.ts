import { Hono, type MiddlewareHandler } from 'hono';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { authenticate, requireAccess } from '../access.ts';
import type { AppEnv } from '../app-env.ts';

/** What a role exposes on `GET /metrics`: its own registry and what to read before a scrape. */
export interface RoleMetrics {
  registry: Registry;
  /** Brings the gauges up to date (from the database) just before they are written out. */
  refresh(): Promise<void>;
}

/**
 * How often the default metrics sample the event loop's delay (`nodejs_eventloop_lag_*`):
 * prom-client's own default is every 10 ms, a timer that wakes the process 100 times a second
 * whether it works or not. Measured on this kind of machine (a 2-core virtual machine, node 24):
 * an idle process with that timer spent ~5 CPU-ms per second (a Station's ~0.2 CPU-s during the
 * 39 s backup of the million-file bench, issue #27 item 5), with one every 100 ms ~0.8 ms. A
 * stall of the loop of 100 ms or more still shows in every sample (the timer fires late by it).
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * A registry of the app's own (never prom-client's global one, so two apps in one process or
 * one test never share values), holding the default process metrics.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/**
 * Declares the role's metrics in `registry`: `gauge`/`counter` (name, help, optional labels)
 * stand for prom-client's `new Gauge({ name, help, labelNames, registers: [registry] })`.
 */
export function metricsIn(registry: Registry) {
  const registers = [registry];
  return {
    gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
      return new Gauge({ name, help, labelNames, registers });
    },
    counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
      return new Counter({ name, help, labelNames, registers });
    },
  };
}

/** An automation token with the `read` scope (or `manage`), or an admin session. */
function readTokenOrAdmin(): MiddlewareHandler<AppEnv> {
  const token = requireAccess({ level: 'session', scope: 'read' });
  const session = requireAccess({ level: 'admin', scope: 'read' });
  return async function readTokenOrAdmin(c, next) {
    return c.get('auth')?.via === 'token' ? token(c, next) : session(c, next);
  };
}

/** `GET /metrics` in the Prometheus text format. */
export function metricsRoutes(metrics: RoleMetrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/metrics', authenticate(), readTokenOrAdmin(), async (c) => {
    await metrics.refresh();
    const text = await metrics.registry.metrics();
    return c.body(text, 200, {
      'Content-Type': metrics.registry.contentType,
      'Cache-Control': 'no-store',
    });
  });
  return app;
}
