/** One job of one instance as one row: health, newest, count, size chart; its snapshots on demand. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobKey } from '../../src/shared/protocol/job-key.ts';
import type { JobHealthRules, JobSnapshotsPage, JobSummary } from '../../src/shared/protocol/jobs.ts';
import type { OverviewSnapshot } from '../../src/shared/protocol/overview.ts';
import { api, errorText } from '../common/api.ts';
import { ProvenRestorable } from '../common/drill.tsx';
import { formatBytes } from '../common/format.ts';
import { ErrorText, Time } from '../common/ui.tsx';
import { drillBadgeOf, healthBadge, severity, UNUSUAL_RULE } from './health.ts';
import { SizeChart } from './size-chart.tsx';
import { SnapshotTable } from './snapshot-table.tsx';

export function JobRow({
  job,
  rules,
  loadedAt,
  isAdmin,
  onChanged,
}: {
  job: JobSummary;
  rules: JobHealthRules;
  /** When the list was loaded: an open job reloads its snapshots with it. */
  loadedAt: number | null;
  isAdmin: boolean;
  onChanged: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [snapshots, setSnapshots] = useState<OverviewSnapshot[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const ref: JobKey = { scoutId: job.scout_id, instanceId: job.scout_instance_id, jobName: job.job_name };
  const badge = healthBadge(job, rules);
  const key = `${job.scout_id}/${job.scout_instance_id}/${job.job_name}`;
  const tableId = `snapshots-${key.replaceAll('/', '-')}`;
  const count = job.snapshot_count + job.missing_count;
  const unusualShown = job.problems.includes('newest_unusual') && badge.text === 'Unusual' ? 1 : 0;

  const load = async () => {
    try {
      const page = await api.get<JobSnapshotsPage>(stationPaths.jobSnapshots(ref));
      setSnapshots(page.snapshots);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => {
    if (open) void load();
  }, [open, loadedAt]);

  return (
    <article class={`job sev-${severity(job)}`} aria-label={`Job ${job.job_name}`} data-job={key}>
      <div class="job-row">
        <header class="job-head">
          <h4>{job.job_name}</h4>
          <span class={`badge ${badge.tone}`} title={badge.title} data-testid="job-health">
            {badge.text}
          </span>
          {job.unusual_count > unusualShown ? (
            <span class="badge warn" title={UNUSUAL_RULE}>
              {job.unusual_count} unusual
            </span>
          ) : null}
          {job.protected_count > 0 ? (
            <span
              class="badge ok"
              title="Protected by an admin: retention never deletes them"
              data-testid="job-protected"
            >
              {job.protected_count} protected
            </span>
          ) : null}
        </header>
        <dl class="facts job-facts">
          <dt>Newest</dt>
          <dd>
            {job.newest ? (
              <>
                <Time value={job.newest.mtime} /> · {formatBytes(job.newest.size_bytes)}
              </>
            ) : (
              '—'
            )}
          </dd>
          <dt>Snapshots</dt>
          <dd data-testid="snapshot-count">
            {count} ({formatBytes(job.total_bytes)})
          </dd>
          <ProvenRestorable drill={job.last_drill} badge={drillBadgeOf(job, rules)} />
        </dl>
        <SizeChart job={job} />
        <button
          type="button"
          class="toggle"
          aria-expanded={open}
          aria-controls={open ? tableId : undefined}
          aria-label={`Snapshots of ${job.job_name} (${count})`}
          onClick={() => setOpen(!open)}
        >
          {open ? 'Hide snapshots' : `Snapshots (${count})`}
        </button>
      </div>
      {open ? <ErrorText error={error} /> : null}
      {open && snapshots === null && error === null ? <p class="muted">Loading snapshots…</p> : null}
      {open && snapshots !== null ? (
        <SnapshotTable
          id={tableId}
          job={ref}
          snapshots={snapshots}
          isAdmin={isAdmin}
          onChanged={() => {
            void load();
            onChanged();
          }}
        />
      ) : null}
    </article>
  );
}
