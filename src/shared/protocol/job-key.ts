/**
 * One job: the Scout, its instance and the job's name (the key of every snapshot). The Station
 * (src/station/job-key.ts), the web UIs and the path builders (api-paths.ts) use this one type;
 * on the wire the three are `scout_id`, `scout_instance_id`, `job_name`.
 */
export interface JobKey {
  scoutId: string;
  instanceId: string;
  jobName: string;
}
