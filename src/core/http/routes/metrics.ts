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
 * A registry of the app's own (never prom-client's global one, so two apps in one process or
 * one test never share values), holding the default process metrics.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
