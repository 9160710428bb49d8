/** One job of one instance: health at a glance, size chart, and its snapshots with actions. */
import { useState } from 'preact/hooks';
import { api, path } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { drillBadge, ProvenRestorable, WEEKLY_DAYS } from '../common/drill.tsx';
import { formatBytes } from '../common/format.ts';
import { Time } from '../common/ui.tsx';
import { healthBadge, jobHealth, MISSING_RULE, UNUSUAL_RULE } from './health.ts';
import { Filename } from './names.tsx';
import { type InstanceRef, RestoreDialog } from './restore-dialog.tsx';
import { SizeChart } from './size-chart.tsx';
import type { Job, JobRef, Snapshot } from './types.ts';

const FIRST_ROWS = 5;

type Open = { kind: 'delete' | 'restore'; snapshot: Snapshot } | null;

export function JobCard({
  scoutId,
  instanceId,
  job,
  isAdmin,
  targets,
  onChanged,
}: {
  scoutId: string;
  instanceId: string;
  job: Job;
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  const [all, setAll] = useState(false);
  const [open, setOpen] = useState<Open>(null);
  const ref: JobRef = { scoutId, instanceId, jobName: job.job_name };
  const health = jobHealth(job);
  const badge = healthBadge(health.health);
  const newestFirst = [...job.snapshots].reverse();
  const rows = all ? newestFirst : newestFirst.slice(0, FIRST_ROWS);
  const tableId = `snapshots-${scoutId}-${instanceId}-${job.job_name}`;
  // The Station does not know the Scout's drill_schedule (the drill record does not carry it):
  // it assumes the default weekly schedule, so "Not proven recently" means no drill passed in
  // 14 days (or, never drilled, the oldest snapshot is older than that).
  const drill = drillBadge(job.last_drill, WEEKLY_DAYS, job.snapshots.find((s) => !s.missing)?.mtime ?? null);

  return (
    <article
      class="job"
      aria-label={`Job ${job.job_name}`}
      data-job={`${scoutId}/${instanceId}/${job.job_name}`}
    >
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
      </header>
      <div class="job-glance">
        <dl class="facts">
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
            {job.snapshots.length} ({formatBytes(health.totalBytes)})
          </dd>
          <ProvenRestorable drill={job.last_drill} badge={drill} />
        </dl>
        <SizeChart jobName={job.job_name} snapshots={job.snapshots} />
      </div>
      <div class="table-wrap">
        <table id={tableId} class="stack">
          <caption class="visually-hidden">Snapshots of {job.job_name}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Snapshot</th>
              <th scope="col">Size</th>
              <th scope="col">Stored</th>
              <th scope="col">Notes</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <SnapshotRow
                key={s.name}
                job={ref}
                snapshot={s}
                isAdmin={isAdmin}
                onOpen={(kind) => setOpen({ kind, snapshot: s })}
              />
            ))}
          </tbody>
        </table>
      </div>
      {job.snapshots.length > FIRST_ROWS ? (
        <button type="button" class="link" aria-controls={tableId} onClick={() => setAll(!all)}>
          {all ? `Show the newest ${FIRST_ROWS} only` : `Show all ${job.snapshots.length} snapshots`}
        </button>
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete snapshot"
          confirmLabel="Delete snapshot"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await api.delete(path('/api/snapshots', scoutId, instanceId, job.job_name, open.snapshot.name));
            onChanged();
          }}
        >
          <p>
            This permanently deletes the snapshot <code>{open.snapshot.name}</code> (
            {formatBytes(open.snapshot.size_bytes)}
            {open.snapshot.mtime ? (
              <>
                , stored <Time value={open.snapshot.mtime} />
              </>
            ) : null}
            ) of job <strong>{job.job_name}</strong> on Scout <strong>{scoutId}</strong>, instance{' '}
            <code>{instanceId}</code> from the Station's disk. It cannot be undone.
          </p>
          <p>
            The other {job.snapshots.length - 1} snapshot{job.snapshots.length === 2 ? '' : 's'} of the job
            stay.
          </p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'restore' ? (
        <RestoreDialog
          job={ref}
          filename={open.snapshot.name}
          targets={targets}
          onClose={() => setOpen(null)}
        />
      ) : null}
    </article>
  );
}

function SnapshotRow({
  job,
  snapshot: s,
  isAdmin,
  onOpen,
}: {
  job: JobRef;
  snapshot: Snapshot;
  isAdmin: boolean;
  onOpen: (kind: 'delete' | 'restore') => void;
}) {
  return (
    <tr class={s.unusual ? 'unusual' : undefined} data-snapshot={s.name}>
      <td class="name">
        <Filename name={s.name} />
      </td>
      <td class="num" data-label="Size">
        {formatBytes(s.size_bytes)}
      </td>
      <td class="nowrap" data-label="Stored">
        <Time value={s.mtime} />
      </td>
      <td class="notes">
        {s.unusual ? (
          <span class="note">
            <span class="badge warn" title={UNUSUAL_RULE}>
              Unusual
            </span>{' '}
            <small>{s.unusual_reason ?? 'size or Scout key changed sharply'}</small>
          </span>
        ) : null}
        {s.missing ? (
          <span class="badge bad" title={MISSING_RULE}>
            File missing
          </span>
        ) : null}
      </td>
      <td class="row-actions">
        <div class="actions nowrap">
          {s.missing ? null : (
            <a
              class="button"
              href={path('/api/snapshots', job.scoutId, job.instanceId, job.jobName, s.name)}
              download={s.name}
              aria-label={`Download ${s.name}`}
            >
              Download
            </a>
          )}
          {isAdmin && !s.missing ? (
            <button
              type="button"
              aria-label={`Request restore of ${s.name}`}
              onClick={() => onOpen('restore')}
            >
              Request restore
            </button>
          ) : null}
          {isAdmin ? (
            <button
              type="button"
              class="danger-outline"
              aria-label={`Delete ${s.name}`}
              onClick={() => onOpen('delete')}
            >
              Delete
            </button>
          ) : null}
        </div>
      </td>
    </tr>
  );
}
