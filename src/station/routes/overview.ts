import { Hono } from 'hono';
import { z } from 'zod';
import { forbidden } from '../../core/errors.ts';
import { maySeeSettings, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readQuery } from '../../core/http/json-body.ts';
import type { Overview } from '../../shared/protocol/overview.ts';
import type { StationServices } from '../services.ts';

const OverviewQuery = z.object({
  section: z
    .enum(['settings', 'storage', 'snapshots', ''], {
      error: 'section must be settings, storage or snapshots',
    })
    .optional()
    .transform((value) => value || undefined),
});

/** `GET /api/overview`: settings, storage and every stored snapshot, or one `section` of them. */
export function overviewRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.get('/overview', signedIn('read'), async (c) => {
    const { section } = readQuery(c, OverviewQuery);
    const mayReadSettings = maySeeSettings(c);
    if (section === 'settings' && !mayReadSettings) {
      throw forbidden('this automation token may not read settings (needs the "manage" scope)');
    }
    const body: Overview = {};
    if ((section === undefined || section === 'settings') && mayReadSettings) {
      body.settings = { ...(await station.settings.read()), ...(await station.replication.settings.read()) };
    }
    if (section === undefined || section === 'storage') {
      const info = await station.store.health();
      body.storage = {
        ...info,
        used_bytes:
          info.total_bytes !== null && info.free_bytes !== null ? info.total_bytes - info.free_bytes : null,
        ...(await station.snapshots.totals()),
        staging_dir: station.config.stagingDir,
        max_upload_bytes: station.config.maxUploadBytes,
        uploads_paused: await station.acceptance.paused(),
      };
    }
    if (section === undefined || section === 'snapshots')
      body.scouts = await station.drills.decorate(await station.snapshots.tree());
    return c.json(body);
  });

  return app;
}
