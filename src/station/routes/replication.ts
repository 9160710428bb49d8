import { Hono } from 'hono';
import { signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { ReplicationRunReply } from '../../shared/protocol/replication.ts';
import type { StationServices } from '../services.ts';

/** The replica's side: what replication did (`read`) and a run now (`manage`). */
export function replicationRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  app.get('/', signedIn('read'), async (c) => c.json(await station.replication.status()));
  app.post('/run', signedIn('manage'), async (c) =>
    c.json({ status: await station.replication.run() } satisfies ReplicationRunReply),
  );
  return app;
}
