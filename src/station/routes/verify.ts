import { Hono } from 'hono';
import { signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { StationServices } from '../services.ts';

/** Integrity verification of every stored snapshot: the last run's result, and a run on demand. */
export function verifyRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.get('/admin/verify', signedIn('read'), async (c) => c.json(await station.verifier.last()));
  app.post('/admin/verify', signedIn('manage'), async (c) => c.json(await station.verifier.run()));

  return app;
}
