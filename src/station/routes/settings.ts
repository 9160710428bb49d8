import { Hono } from 'hono';
import type { z } from 'zod';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import type { SettingsReply, StationSettingsView } from '../../shared/protocol/settings.ts';
import { ReplicationSettingsInput } from '../replication/replication-settings.ts';
import { StationSettingsInput } from '../services/station-settings.ts';
import type { StationServices } from '../services.ts';

/** `POST /api/settings` takes the Station's settings and the replica's (replication_*) in one body. */
const SettingsBody = StationSettingsInput.extend(ReplicationSettingsInput.shape);

function split(body: z.infer<typeof SettingsBody>) {
  const own: Record<string, unknown> = {};
  const replication: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name.startsWith('replication_')) replication[name] = value;
    else own[name] = value;
  }
  return {
    own: own as z.infer<typeof StationSettingsInput>,
    replication: replication as ReplicationSettingsInput,
  };
}

/** `POST /api/settings`: the Station's own settings and the replica's. */
export function settingsRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.post('/settings', adminOnly('manage'), async (c) => {
    const { own, replication } = split(await readJson(c, SettingsBody));
    const saved = await station.replication.settings.update(replication);
    await station.replication.reschedule();
    return c.json({
      settings: { ...(await station.settings.replace(own)), ...saved },
    } satisfies SettingsReply<StationSettingsView>);
  });

  return app;
}
