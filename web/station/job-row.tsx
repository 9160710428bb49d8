/** One job of one instance as one row: health, newest, count, size chart; its snapshots on demand. */
import { useState } from 'preact/hooks';
import type { JobKey } from '../../src/shared/protocol/job-key.ts';
import type { OverviewJob } from '../../src/shared/protocol/overview.ts';
import { ProvenRestorable } from '../common/drill.tsx';
import { formatBytes } from '../common/format.ts';
import { Time } from '../common/ui.tsx';
import { healthBadge, type JobHealth, UNUSUAL_RULE } from './health.ts';
import type { InstanceRef } from './restore-dialog.tsx';
import { SizeChart } from './size-chart.tsx';
import { SnapshotTable } from './snapshot-table.tsx';

export function JobRow({
  job,
  health,
  where,
  isAdmin,
  targets,
  onChanged,
}: {
  job: OverviewJob;
  health: JobHealth;
  where: Omit<JobKey, 'jobName'>;
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  const [open, setOpen] = useState(false);
  const ref: JobKey = { ...where, jobName: job.job_name };
  const badge = healthBadge(health.health);
  const key = `${where.scoutId}/${where.instanceId}/${job.job_name}`;
  const tableId = `snapshots-${key.replaceAll('/', '-')}`;
  const count = job.snapshots.length;
  const guarded = job.snapshots.filter((s) => s.protected).length;

  return (
    <article class={`job sev-${health.severity}`} aria-label={`Job ${job.job_name}`} data-job={key}>
      <div class="job-row">
        <header class="job-head">
          <h4>{job.job_name}</h4>
          <span class={`badge ${badge.tone}`} title={badge.title} data-testid="job-health">
            {badge.text}
          </span>
          {health.unusualCount > (health.health === 'unusual' ? 1 : 0) ? (
            <span class="badge warn" title={UNUSUAL_RULE}>
              {health.unusualCount} unusual
            </span>
          ) : null}
          {guarded > 0 ? (
            <span
              class="badge ok"
              title="Protected by an admin: retention never deletes them"
              data-testid="job-protected"
            >
              {guarded} protected
            </span>
          ) : null}
        </header>
        <dl class="facts job-facts">
          <dt>Newest</dt>
          <dd>
            {health.latest ? (
              <>
                <Time value={health.latest.mtime} /> · {formatBytes(health.latest.size_bytes)}
              </>
            ) : (
              '—'
            )}
          </dd>
          <dt>Snapshots</dt>
          <dd data-testid="snapshot-count">
            {count} ({formatBytes(health.totalBytes)})
          </dd>
          <ProvenRestorable drill={job.last_drill} badge={health.drill} />
        </dl>
        <SizeChart jobName={job.job_name} snapshots={job.snapshots} />
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
      {open ? (
        <SnapshotTable
          id={tableId}
          job={ref}
          snapshots={job.snapshots}
          isAdmin={isAdmin}
          targets={targets}
          onChanged={onChanged}
        />
      ) : null}
    </article>
  );
}
