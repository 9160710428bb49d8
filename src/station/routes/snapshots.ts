import { type Context, Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { adminOnly, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { StationServices } from '../services.ts';
import type { SnapshotKey } from '../storage/snapshot-store.ts';
import { sendSnapshot } from './send-snapshot.ts';

/** Operator access to stored snapshots: download (restore scope) and delete (admin). */
export function snapshotRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();
  const keyOf = (p: Record<string, string>): SnapshotKey => ({
    scoutId: p.scoutId ?? '',
    instanceId: p.instanceId ?? null,
    jobName: p.jobName ?? '',
    filename: p.filename ?? '',
  });

  const download = async (c: Context<AppEnv>) => {
    const located = await station.snapshots.locate(keyOf(c.req.param() as Record<string, string>));
    return sendSnapshot(c, station.store, located);
  };
  const remove = async (c: Context<AppEnv>) =>
    c.json(await station.snapshots.remove(keyOf(c.req.param() as Record<string, string>)));

  app.get('/snapshots/:scoutId/:instanceId/:jobName/:filename', signedIn('restore'), download);
  app.delete('/snapshots/:scoutId/:instanceId/:jobName/:filename', adminOnly('manage'), remove);
  // The legacy layout, from before instance IDs: BACKUP_ROOT/<scout>/<job>/<file>.
  app.get('/snapshots/:scoutId/:jobName/:filename', signedIn('restore'), download);
  app.delete('/snapshots/:scoutId/:jobName/:filename', adminOnly('manage'), remove);

  app.delete('/instances/:scoutId/:instanceId', adminOnly('manage'), async (c) => {
    const cleanup = c.req.query('cleanup_missing');
    if (cleanup !== undefined && cleanup !== 'true' && cleanup !== 'false') {
      throw badRequest('cleanup_missing must be true or false');
    }
    const { scoutId, instanceId } = c.req.param();
    return c.json(await station.snapshots.removeInstance(scoutId, instanceId, cleanup === 'true'));
  });

  app.get('/admin/verify', signedIn('read'), async (c) => c.json(await station.verifier.last()));
  app.post('/admin/verify', signedIn('manage'), async (c) => c.json(await station.verifier.run()));

  return app;
}
