import { type Context, Hono } from 'hono';
import { clock } from '../../core/clock.ts';
import { badRequest } from '../../core/errors.ts';
import { adminOnly, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import {
  ProtectRequestSchema,
  RemoveInstanceQuerySchema,
  RestoreTargetSchema,
} from '../../shared/protocol/snapshots.ts';
import type { StationServices } from '../services.ts';
import type { SnapshotKey } from '../storage/storage.ts';
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
    c.json(await station.snapshots.remove(keyOf(c.req.param() as Record<string, string>), clock.now()));

  app.get('/snapshots/:scoutId/:instanceId/:jobName/:filename', signedIn('restore'), download);
  app.delete('/snapshots/:scoutId/:instanceId/:jobName/:filename', adminOnly('manage'), remove);
  // The legacy layout, from before instance IDs: BACKUP_ROOT/<scout>/<job>/<file>.
  app.get('/snapshots/:scoutId/:jobName/:filename', signedIn('restore'), download);
  app.delete('/snapshots/:scoutId/:jobName/:filename', adminOnly('manage'), remove);

  app.post('/snapshots/:scoutId/:instanceId/:jobName/:filename/protect', adminOnly('manage'), async (c) => {
    const body = await readJson(c, ProtectRequestSchema);
    return c.json(
      await station.snapshots.protect(keyOf(c.req.param() as Record<string, string>), body.protected),
    );
  });

  app.get('/restore-requests', signedIn('read'), async (c) =>
    c.json(await station.restoreRequests.listRecent()),
  );
  app.post('/snapshots/:scoutId/:instanceId/:jobName/:filename/restore', adminOnly('restore'), async (c) => {
    const body = await readJson(c, RestoreTargetSchema);
    const hasScout = body.target_scout_id !== undefined;
    if (hasScout !== (body.target_instance_id !== undefined)) {
      throw badRequest(
        'give both target_scout_id and target_instance_id, or neither to restore on the original instance',
      );
    }
    const key = keyOf(c.req.param() as Record<string, string>);
    const target = hasScout
      ? { scoutId: body.target_scout_id ?? '', instanceId: body.target_instance_id ?? '' }
      : null;
    return c.json(
      await station.restoreRequests.create({ ...key, instanceId: key.instanceId ?? '' }, target),
      201,
    );
  });

  app.delete('/instances/:scoutId/:instanceId', adminOnly('manage'), async (c) => {
    const { cleanup_missing } = readQuery(c, RemoveInstanceQuerySchema);
    const { scoutId, instanceId } = c.req.param();
    return c.json(await station.snapshots.removeInstance(scoutId, instanceId, cleanup_missing));
  });

  return app;
}
