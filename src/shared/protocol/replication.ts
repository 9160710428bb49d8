/** One replicated job in `GET /api/replication`: its newest snapshot on each side and the lag. */
export interface ReplicationJobLag {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  source_newest: string | null;
  replica_newest: string | null;
  lag_seconds: number;
}

/**
 * The body of `GET /api/replication` on a replica Station (src/station/replication/replication.ts
 * builds it; the dashboard's web/station/replication-card.tsx shows it).
 */
export interface ReplicationStatusView {
  state: 'idle' | 'running' | 'not_configured';
  last_started_at: string | null;
  last_finished_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  bytes_copied: number;
  bytes_copied_total: number;
  failures_total: number;
  copied_total: number;
  jobs: ReplicationJobLag[];
}
