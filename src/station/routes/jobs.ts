import { Hono } from 'hono';
import { clock } from '../../core/clock.ts';
import { signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readQuery } from '../../core/http/json-body.ts';
import type { InstanceList, JobSnapshotsPage, JobsPage } from '../../shared/protocol/jobs.ts';
import { JobsQuerySchema } from '../../shared/protocol/jobs-query.ts';
import type { StationServices } from '../services.ts';

/**
 * The dashboard's reads (src/shared/protocol/jobs.ts): jobs a page at a time with their
 * health, one job's snapshots on demand, and the instances a restore can target.
 */
export function jobRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.get('/jobs', signedIn('read'), async (c) => {
    const query = readQuery(c, JobsQuerySchema);
    return c.json<JobsPage>(await station.jobs.page(query, clock.now()));
  });

  app.get('/jobs/:scoutId/:instanceId/:jobName/snapshots', signedIn('read'), async (c) => {
    const { scoutId, instanceId, jobName } = c.req.param();
    return c.json<JobSnapshotsPage>(await station.jobs.snapshots({ scoutId, instanceId, jobName }));
  });

  app.get('/instances', signedIn('read'), async (c) => c.json<InstanceList>(await station.jobs.instances()));

  return app;
}
