/**
 * Off-site copy on the overview: on a replica, each replicated job with its lag, the last run
 * and its failure, and "Copy now"; on a primary, which replicas pulled and when.
 */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  ReplicaPullList,
  ReplicationRunReply,
  ReplicationStatusView,
} from '../../src/shared/protocol/replication.ts';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { ErrorText, Section, TableHead, Time, useAction } from '../common/ui.tsx';

/** "up to date", "3 h 20 min behind". */
export function lagText(seconds: number): string {
  if (seconds <= 0) return 'up to date';
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days} d ${hours} h behind`;
  if (hours > 0) return `${hours} h ${minutes} min behind`;
  return `${Math.max(1, minutes)} min behind`;
}

/** While a copy runs the card refreshes this often (as the Scout UI does during work). */
const RUNNING_REFRESH_MS = 2500;

export function ReplicaCard({ refreshMs, isAdmin }: { refreshMs: number; isAdmin: boolean }) {
  const [running, setRunning] = useState(false);
  const poll = usePoll(
    () => api.get<ReplicationStatusView>(stationPaths.replication),
    running ? RUNNING_REFRESH_MS : refreshMs,
  );
  const run = useAction();
  const status = poll.data;
  useEffect(() => setRunning(status?.state === 'running'), [status?.state]);
  if (!status || status.state === 'not_configured') return null;
  const failing = status.last_error !== null;
  return (
    <Section
      title="Off-site copy (this Station is a replica)"
      actions={
        isAdmin ? (
          <button
            type="button"
            disabled={run.busy || status.state === 'running'}
            onClick={() =>
              void run.run(async () => {
                await api.post<ReplicationRunReply>(stationPaths.replicationRun);
                await poll.reload();
              })
            }
          >
            {status.state === 'running' ? 'Copying…' : 'Copy now'}
          </button>
        ) : null
      }
    >
      <ErrorText error={run.error ?? poll.error} />
      <dl class="facts" data-testid="replication-status">
        <dt>State</dt>
        <dd>
          <span class={`badge ${status.state === 'running' ? 'warn' : failing ? 'bad' : 'ok'}`}>
            {status.state === 'running' ? 'Copying' : failing ? 'Last run failed' : 'Idle'}
          </span>
        </dd>
        <dt>Last run</dt>
        <dd>
          <Time value={status.last_started_at} />
          {status.last_finished_at && status.last_finished_at >= (status.last_started_at ?? '') ? (
            <>
              {' '}
              (ended <Time value={status.last_finished_at} />, {formatBytes(status.bytes_copied)} copied)
            </>
          ) : null}
        </dd>
        {failing ? (
          <>
            <dt>Failure</dt>
            <dd class="error" data-testid="replication-error">
              {status.last_error}
            </dd>
          </>
        ) : null}
      </dl>
      {status.jobs.length > 0 ? (
        <div class="table-wrap">
          <table data-testid="replication-jobs">
            <caption class="visually-hidden">Replicated jobs</caption>
            <TableHead columns={['Scout / instance / job', 'Newest on the primary', 'Newest here', 'Lag']} />
            <tbody>
              {status.jobs.map((job) => (
                <tr key={`${job.scout_id}/${job.scout_instance_id}/${job.job_name}`}>
                  <td>
                    {job.scout_id} / <code>{job.scout_instance_id}</code> / {job.job_name}
                  </td>
                  <td>
                    <Time value={job.source_newest} />
                  </td>
                  <td>
                    <Time value={job.replica_newest} />
                  </td>
                  <td>
                    <span class={`badge ${job.lag_seconds > 0 ? 'warn' : 'ok'}`}>
                      {lagText(job.lag_seconds)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Section>
  );
}

export function ReplicasCard({ refreshMs }: { refreshMs: number }) {
  const poll = usePoll(() => api.get<ReplicaPullList>(stationPaths.replicationPulls), refreshMs);
  const replicas = poll.data?.replicas ?? [];
  if (replicas.length === 0) return null;
  return (
    <Section title="Replicas pulling from this Station">
      <ErrorText error={poll.error} />
      <div class="table-wrap">
        <table data-testid="replicas">
          <caption class="visually-hidden">Replicas</caption>
          <TableHead columns={['Replica (token)', 'Last listed', 'Last download', 'Downloads', 'Sent']} />
          <tbody>
            {replicas.map((r) => (
              <tr key={r.token_id}>
                <td>{r.name}</td>
                <td>
                  <Time value={r.last_list_at} />
                </td>
                <td>
                  <Time value={r.last_download_at} />
                </td>
                <td>{r.downloads}</td>
                <td>{formatBytes(r.bytes_served)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}
