/** The query of `GET /api/jobs` (src/shared/protocol/jobs.ts), apart so the web needs no zod. */
import { z } from 'zod';
import { JOB_HEALTH, JOBS_PAGE_DEFAULT, JOBS_PAGE_MAX } from './jobs.ts';

const filterText = (field: string) =>
  z
    .string()
    .max(255, `${field} is at most 255 characters`)
    .optional()
    .transform((value) => value || undefined);

/** The query of `GET /api/jobs`; every filter is optional and they combine. */
export const JobsQuerySchema = z.object({
  limit: z.coerce
    .number({ error: `limit must be a whole number from 1 to ${JOBS_PAGE_MAX}` })
    .int(`limit must be a whole number from 1 to ${JOBS_PAGE_MAX}`)
    .min(1, `limit must be a whole number from 1 to ${JOBS_PAGE_MAX}`)
    .max(JOBS_PAGE_MAX, `limit must be a whole number from 1 to ${JOBS_PAGE_MAX}`)
    .default(JOBS_PAGE_DEFAULT),
  /** `next_cursor` of the page before; absent for the first page. */
  cursor: filterText('cursor'),
  /** Exact host (Scout ID), instance ID or job name. */
  scout_id: filterText('scout_id'),
  scout_instance_id: filterText('scout_instance_id'),
  job_name: filterText('job_name'),
  /** Case-insensitive text found in the Scout ID, the instance ID or the job name. */
  q: filterText('q'),
  health: z
    .enum([...JOB_HEALTH, ''], { error: `health must be one of ${JOB_HEALTH.join(', ')}` })
    .optional()
    .transform((value) => value || undefined),
});
export type JobsQuery = z.infer<typeof JobsQuerySchema>;
