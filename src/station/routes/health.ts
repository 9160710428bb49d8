import { Hono } from 'hono';
import type { AppEnv } from '../../core/http/app-env.ts';
import { logger } from '../../core/log.ts';
import type { StationServices } from '../services.ts';

const log = logger.child({ mod: 'station/health' });

let lastLogged: string | null = null;

/**
 * `/health` is public: the database's own error text (host names, user names, SQL) goes to
 * the log, the answer only says that the database cannot be reached.
 */
async function databaseProblem(station: StationServices): Promise<string | null> {
  try {
    await station.storage.ping();
    lastLogged = null;
    return null;
  } catch (err) {
    // Probes come every few seconds: log a failure once, and again when its cause changes.
    const cause = err instanceof Error ? err.message : String(err);
    if (cause !== lastLogged) log.error({ err }, 'health check: the database is unreachable');
    lastLogged = cause;
    return 'database unreachable; the Station log has the cause';
  }
}

export function healthRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.get('/health', async (c) => {
    const [storage, dbProblem] = await Promise.all([station.store.health(), databaseProblem(station)]);
    const ok = storage.writable && dbProblem === null;
    return c.json(
      {
        status: ok ? 'ok' : 'unavailable',
        storage,
        database: { kind: station.storage.kind, ok: dbProblem === null },
        max_upload_bytes: station.config.maxUploadBytes,
        ...(ok
          ? {}
          : { detail: dbProblem ?? storage.problem ?? 'storage is not writable', code: 'unavailable' }),
      },
      ok ? 200 : 503,
    );
  });

  app.get('/health/ready', async (c) => {
    const [storage, dbProblem] = await Promise.all([station.store.health(), databaseProblem(station)]);
    const storageProblem = storage.writable ? null : (storage.problem ?? 'storage is not writable');
    const problems = [storageProblem, dbProblem].filter((p): p is string => p !== null);
    if (problems.length > 0)
      return c.json({ status: 'unavailable', detail: problems.join('; '), code: 'unavailable' }, 503);
    return c.json({ status: 'ok' });
  });

  return app;
}
