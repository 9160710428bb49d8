/** What started a job's backup: the cron schedule, run-now, or force-send (backed up even when unchanged). */
export type Trigger = 'schedule' | 'run_now' | 'force_send';
