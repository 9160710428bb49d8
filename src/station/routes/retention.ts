import { Hono } from 'hono';
import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { describeIssue, readJson, readQuery } from '../../core/http/json-body.ts';
import type { JobRetentionList, JobRetentionSaved } from '../../shared/protocol/retention.ts';
import { RetentionOverrides, retentionShape } from '../retention/fields.ts';
import { checkJobRef } from '../services/snapshots.ts';
import type { StationServices } from '../services.ts';

const name = z.string().min(1).max(255).optional();
/** The job to preview (all optional) and the retention fields to try, as query text. */
const PreviewQuery = z.strictObject({
  scout_id: name,
  scout_instance_id: name,
  job_name: name,
  ...Object.fromEntries(
    Object.keys(retentionShape).map((field) => [
      field,
      z
        .string()
        .regex(/^\d{1,9}$/, `${field} must be a whole number`)
        .optional(),
    ]),
  ),
});

/** Retention: the preview and the per-job overrides (admin, or an automation token with `manage`). */
export function retentionRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.get('/retention/preview', adminOnly('manage'), async (c) => {
    const { scout_id, scout_instance_id, job_name, ...fields } = readQuery(c, PreviewQuery);
    const trial = RetentionOverrides.safeParse(
      Object.fromEntries(Object.entries(fields).map(([field, text]) => [field, Number(text)])),
    );
    if (!trial.success) throw badRequest(describeIssue(trial.error));
    const filter = { scoutId: scout_id, instanceId: scout_instance_id, jobName: job_name };
    return c.json(await station.retention.preview(filter, trial.data));
  });

  app.get('/retention/jobs', adminOnly('manage'), async (c) =>
    c.json({ jobs: await station.jobRetention.list() } satisfies JobRetentionList),
  );

  /** Replaces a job's overrides with the body's fields; `{}` = the job follows the Station. */
  app.post('/retention/jobs/:scoutId/:instanceId/:jobName', adminOnly('manage'), async (c) => {
    const { scoutId, instanceId, jobName } = c.req.param();
    const ref = { scoutId, instanceId, jobName };
    checkJobRef(ref);
    const overrides = await station.jobRetention.replace(ref, await readJson(c, RetentionOverrides));
    return c.json({
      scout_id: scoutId,
      scout_instance_id: instanceId,
      job_name: jobName,
      overrides,
      effective: await station.jobRetention.effective(ref),
    } satisfies JobRetentionSaved);
  });

  return app;
}
