import { z } from 'zod';

/** The longest `error` a drill report carries (the Scout cuts a longer one; the Station refuses it). */
export const DRILL_ERROR_MAX = 1000;

/**
 * `POST /backup/drills/{scout}/{instance}/{job}`: a restore drill's outcome. The Scout keeps it
 * as the job's `state.last_drill` and the Station's overview shows it as the job's `last_drill`.
 */
export const DrillOutcomeSchema = z.strictObject({
  filename: z.string({ error: 'filename must be the drilled snapshot file name' }).max(255),
  status: z.enum(['ok', 'failed'], { error: 'status must be ok or failed' }),
  files: z.number().int().min(0, 'files must be a whole number ≥ 0').max(Number.MAX_SAFE_INTEGER),
  bytes: z.number().int().min(0, 'bytes must be a whole number ≥ 0').max(Number.MAX_SAFE_INTEGER),
  error: z.string().max(DRILL_ERROR_MAX, `error is at most ${DRILL_ERROR_MAX} characters`).nullable(),
  finished_at: z.iso.datetime({ offset: true, error: 'finished_at must be an ISO 8601 date and time' }),
});

export type DrillOutcome = z.infer<typeof DrillOutcomeSchema>;

/** A Scout's `POST /api/drills/run`: one job (`relative_path`) or, without it, every job. */
export const DrillRunSchema = z.strictObject({
  relative_path: z
    .string({ error: 'relative_path must be the job folder, relative to SCAN_ROOT' })
    .optional(),
});
export type DrillRunBody = z.input<typeof DrillRunSchema>;
