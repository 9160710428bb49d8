/**
 * The first thing the Scout console shows: every job with its last result (failed ones first),
 * when it last succeeded, its newest snapshot's size, the next scheduled run and "Back up now".
 */
import { useState } from 'preact/hooks';
import { api } from '../common/api.ts';
import { formatBytes, localTime } from '../common/format.ts';
import type { Polled } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { ErrorText, Notice, Section, TableHead, Time, useAction } from '../common/ui.tsx';
import { StagedLine, StatusBadge } from './job-card.tsx';
import { folderUrl, jobLabel } from './paths.ts';
import type { StatusPoll } from './status.ts';
import type { Directory, DirectoryList, OperationReply } from './types.ts';

/** Failed (or a marker not valid) first, then cancelled, never run, and the jobs that are fine. */
function rank(dir: Directory): number {
  if (dir.config_error || dir.state.last_status === 'failed') return 0;
  if (dir.state.last_status === 'cancelled') return 1;
  if (dir.state.last_status === 'never_run') return 2;
  return 3;
}

export function sortedJobs(directories: Directory[]): Directory[] {
  return [...directories].sort((a, b) => rank(a) - rank(b) || jobLabel(a).localeCompare(jobLabel(b)));
}

/** One line answering "are my backups OK?". */
function Verdict({ jobs }: { jobs: Directory[] }) {
  const failed = jobs.filter((d) => rank(d) === 0).length;
  const never = jobs.filter((d) => d.state.last_status === 'never_run' && !d.config_error).length;
  if (failed > 0)
    return (
      <p class="verdict bad" data-testid="verdict">
        {failed} of {jobs.length} job{jobs.length === 1 ? '' : 's'} failed: see below.
      </p>
    );
  if (never > 0)
    return (
      <p class="verdict warn" data-testid="verdict">
        {never} of {jobs.length} job{jobs.length === 1 ? '' : 's'} not backed up yet.
      </p>
    );
  return (
    <p class="verdict ok" data-testid="verdict">
      All {jobs.length} job{jobs.length === 1 ? '' : 's'} backed up.
    </p>
  );
}

export function JobsGlance({ status, dirs }: { status: StatusPoll; dirs: Polled<DirectoryList> }) {
  const list = dirs.data;
  const next = status.data?.scheduler.next_run_at ?? null;
  const jobs = list ? sortedJobs(list.directories) : [];
  return (
    <Section title="Backups">
      <ErrorText error={dirs.error} />
      {list === null ? (
        dirs.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : jobs.length === 0 ? (
        <p>
          {list.discovering ? 'Still searching the scan root for jobs… ' : 'No jobs yet. '}A job is a folder
          under the scan root with a <code>.upload_dir</code> marker: open one of{' '}
          <a href="/jobs" onClick={(event) => linkClick(event, '/jobs')}>
            the folders under the scan root
          </a>{' '}
          and make it a job.
        </p>
      ) : (
        <>
          <Verdict jobs={jobs} />
          <div class="table-wrap">
            <table class="stack jobs-glance">
              <caption class="visually-hidden">Backup jobs, failed first</caption>
              <TableHead
                columns={['Job', 'Last result', 'Last success', 'Newest snapshot', 'Next run']}
                actions
              />
              <tbody>
                {jobs.map((dir) => (
                  <JobLine
                    key={dir.relative_path}
                    dir={dir}
                    next={next}
                    status={status}
                    onChanged={dirs.reload}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Section>
  );
}

function JobLine({
  dir,
  next,
  status,
  onChanged,
}: {
  dir: Directory;
  next: string | null;
  status: StatusPoll;
  onChanged: () => Promise<void>;
}) {
  const action = useAction();
  const [queued, setQueued] = useState(false);
  const name = jobLabel(dir);
  const error = dir.config_error ?? (dir.state.last_status === 'failed' ? dir.state.last_error : null);
  return (
    <tr data-job={dir.relative_path} class={rank(dir) === 0 ? 'failed' : undefined}>
      <th scope="row" class="name">
        <a
          href={folderUrl(dir.relative_path)}
          onClick={(event) => linkClick(event, folderUrl(dir.relative_path))}
        >
          {name}
        </a>
      </th>
      <td data-label="Last result">
        <StatusBadge dir={dir} />
        {error ? <small class="job-error">{error}</small> : null}
        {dir.state.staged ? (
          <small class="muted job-staged" data-testid="staged">
            <StagedLine dir={dir} />
          </small>
        ) : null}
      </td>
      <td data-label="Last success">
        <Time value={dir.state.last_success_at} />
      </td>
      <td data-label="Newest snapshot">
        {dir.state.last_stored_bytes != null ? (
          <span title={dir.state.last_stored_as ?? undefined}>
            {formatBytes(dir.state.last_stored_bytes)}
          </span>
        ) : dir.state.last_stored_as ? (
          <span class="muted" title={dir.state.last_stored_as}>
            size not recorded
          </span>
        ) : (
          '—'
        )}
      </td>
      <td data-label="Next run">{next ? <Time value={next} /> : '—'}</td>
      <td class="row-actions">
        <button
          type="button"
          disabled={action.busy || dir.config === null || status.busy}
          aria-label={`Back up ${name} now`}
          title={next ? `Otherwise the next cycle runs ${localTime(next)}` : undefined}
          onClick={async () => {
            setQueued(false);
            const reply = await action.run(() =>
              api.post<OperationReply>('/api/directories/run-now', { relative_path: dir.relative_path }),
            );
            if (reply?.status === 'already_running')
              action.setError('An operation is already running; nothing extra was scheduled.');
            else if (reply) setQueued(true);
            await Promise.all([status.reload(), onChanged()]);
          }}
        >
          Back up now
        </button>
        {queued && status.busy ? <Notice>Queued.</Notice> : null}
        <ErrorText error={action.error} />
      </td>
    </tr>
  );
}
