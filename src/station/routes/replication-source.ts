import { type Context, Hono } from 'hono';
import { signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { ReplicaPullList } from '../../shared/protocol/replication.ts';
import type { ReplicationPulls } from '../replication/pulls.ts';
import { sourceListing } from '../replication/source-listing.ts';
import type { StationServices } from '../services.ts';
import { parseRange, sendSnapshot } from './send-snapshot.ts';

/** The token of a replica's request, when it came with one (an admin's session records no pull). */
function tokenOf(c: Context<AppEnv>) {
  const auth = c.get('auth');
  return auth?.via === 'token' ? { id: auth.token.id, name: auth.token.name } : null;
}

/**
 * What a replica Station pulls from this one (the primary), scope `replicate`: the listing of
 * every stored snapshot with its SHA-256 and the instances they belong to, and each
 * snapshot's bytes with Range support so a copy resumes. Read only: nothing here writes a
 * snapshot, a setting or a token. Each pull is recorded (GET /api/replication/pulls).
 */
export function replicationSourceRoutes(station: StationServices, pulls: ReplicationPulls) {
  const app = new Hono<AppEnv>();

  app.get('/source', signedIn('replicate'), async (c) => {
    const token = tokenOf(c);
    if (token) await pulls.listed(token);
    const [instances, rows] = await Promise.all([station.index.instances(), station.index.all()]);
    return c.json(sourceListing(instances, rows));
  });

  app.get('/source/snapshots/:scoutId/:instanceId/:jobName/:filename', signedIn('replicate'), async (c) => {
    const p = c.req.param();
    const located = await station.snapshots.locate({
      scoutId: p.scoutId,
      instanceId: p.instanceId,
      jobName: p.jobName,
      filename: p.filename,
    });
    const token = tokenOf(c);
    if (token) {
      const range = parseRange(c.req.header('range'), located.sizeBytes);
      const bytes = range === 'invalid' ? 0 : range ? range.end - range.start + 1 : located.sizeBytes;
      await pulls.downloading(token, bytes);
    }
    return sendSnapshot(c, station.store, located);
  });

  app.get('/pulls', signedIn('read'), async (c) =>
    c.json({ replicas: await pulls.list() } satisfies ReplicaPullList),
  );

  return app;
}
