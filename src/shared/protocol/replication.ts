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

/** `POST /api/replication/run`. */
export interface ReplicationRunReply {
  status: 'queued' | 'already_running';
}

/** A replica that pulled from this (primary) Station, in `GET /api/replication/pulls`. */
export interface ReplicaPull {
  token_id: string;
  name: string;
  first_pull_at: string | null;
  last_list_at: string | null;
  last_download_at: string | null;
  downloads: number;
  bytes_served: number;
}

export interface ReplicaPullList {
  replicas: ReplicaPull[];
}

/**
 * The replica's replication settings as answers show them (`replication_token` is write-only:
 * answers carry `replication_token_set`).
 */
export interface ReplicationSettingsView {
  replication_source_url: string;
  replication_token_set: boolean;
  replication_schedule: string;
  replication_bytes_per_second: number;
  replication_max_lag_hours: number;
}
