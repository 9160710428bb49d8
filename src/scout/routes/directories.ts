import { rm } from 'node:fs/promises';
import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { adminOnly, signedIn } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import { DirectoryPathSchema, DirectoryQuerySchema } from '../../shared/protocol/scout-jobs.ts';
import type { OperationReply } from '../../shared/protocol/scout-status.ts';
import { JobConfigInput } from '../jobs/marker.ts';
import type { JobAdmin } from '../services/job-admin.ts';
import type { ScoutServices } from '../services.ts';

const SaveBody = DirectoryPathSchema.extend({ config: JobConfigInput.default({}) });

/** Jobs and the folders under the scan root. */
export function directoryRoutes(scout: ScoutServices, jobs: JobAdmin) {
  const app = new Hono<AppEnv>();

  app.get('/', signedIn('read'), async (c) => c.json(await jobs.list()));
  app.get('/children', signedIn('read'), async (c) =>
    c.json(await jobs.children(readQuery(c, DirectoryQuerySchema).relative_path)),
  );
  app.get('/browse', signedIn('read'), async (c) =>
    c.json(await jobs.browse(readQuery(c, DirectoryQuerySchema).relative_path)),
  );
  app.get('/size', signedIn('read'), async (c) =>
    c.json(await jobs.size(readQuery(c, DirectoryQuerySchema).relative_path)),
  );

  app.post('/save-job', adminOnly('manage'), async (c) => {
    const body = await readJson(c, SaveBody);
    return c.json(await jobs.save(body.relative_path, body.config));
  });

  app.post('/delete-job', adminOnly('manage'), async (c) => {
    const body = await readJson(c, DirectoryPathSchema);
    return c.json(await jobs.remove(body.relative_path, (row) => scout.states.staged(row)?.file ?? null));
  });

  app.post('/exclude', adminOnly('manage'), async (c) => {
    const body = await readJson(c, DirectoryPathSchema);
    return c.json(await jobs.exclude(body.relative_path));
  });

  /** The job at the body's relative_path, refused when its marker is not valid. */
  async function validJob(c: Parameters<typeof readJson>[0]) {
    const body = await readJson(c, DirectoryPathSchema);
    const job = await jobs.requireJob(body.relative_path);
    if (!job.config) throw badRequest(`the job's marker is not valid: ${job.config_error}`);
    return { job, jobName: job.config.job_name };
  }

  // One job's "Back up now": a run-now cycle of that job alone (unchanged files stay unchanged).
  app.post('/run-now', signedIn('backup'), async (c) => {
    const { job } = await validJob(c);
    return c.json({ status: scout.scheduler.runNow(job) } satisfies OperationReply);
  });

  app.post('/force-send', adminOnly('backup'), async (c) => {
    const { job, jobName } = await validJob(c);
    const status = scout.runner.start('force_send', jobName, (ctx) => scout.backup.forceSend(job, ctx));
    return c.json({ status } satisfies OperationReply);
  });

  app.post('/clear-staged', adminOnly('manage'), async (c) => {
    const body = await readJson(c, DirectoryPathSchema);
    const job = await jobs.requireJob(body.relative_path);
    if (scout.runner.busy())
      throw badRequest('an operation is running; wait for it to end, then clear the staged archive');
    const row = await scout.states.get(job.relative_path);
    const staged = scout.states.staged(row);
    if (staged) await rm(staged.file, { force: true });
    await scout.states.update(job.relative_path, job.config?.job_name ?? row?.jobName ?? '', {
      staged: null,
      lastError: null,
      lastErrorCode: null,
    });
    return c.json({ status: 'cleared', relative_path: job.relative_path, cleared: staged !== null });
  });

  return app;
}
