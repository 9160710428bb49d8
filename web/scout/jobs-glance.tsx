/**
 * The first thing the Scout console shows: every job with its last result (failed ones first),
 * when it last succeeded, its newest snapshot's size, the next scheduled run and "Back up now".
 */

import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  DirectoryList,
  DirectoryPathBody,
  DirectoryView,
} from '../../src/shared/protocol/scout-jobs.ts';
import type { OperationReply } from '../../src/shared/protocol/scout-status.ts';
import { api } from '../common/api.ts';
import { formatBytes, localTime } from '../common/format.ts';
import type { Polled } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { ErrorText, Section, TableHead, Time, useAction } from '../common/ui.tsx';
import { STALE_NOTE, StagedLine, StatusBadge, staleFailure } from './job-card.tsx';
import { folderUrl, jobLabel } from './paths.ts';
import type { StatusPoll } from './status.ts';

/** Failed (or a marker not valid) first, then cancelled, never run, and the jobs that are fine. */
function rank(dir: DirectoryView, stationSet: boolean): number {
  if (dir.config_error || (dir.state.last_status === 'failed' && !staleFailure(dir, stationSet))) return 0;
  if (dir.state.last_status === 'cancelled') return 1;
  if (dir.state.last_success_at === null) return 2;
  return 3;
}

export function sortedJobs(directories: DirectoryView[], stationSet: boolean): DirectoryView[] {
  return [...directories].sort(
    (a, b) => rank(a, stationSet) - rank(b, stationSet) || jobLabel(a).localeCompare(jobLabel(b)),
  );
}

const jobsWord = (n: number) => `${n} job${n === 1 ? '' : 's'}`;

/**
 * One line answering "are my backups OK?", true at every moment: a job counts as backed up
 * only once a snapshot of it is on the Station (last_success_at), never while its first
 * backup runs, and nothing counts without a Station.
 */
function Verdict({ jobs, status }: { jobs: DirectoryView[]; status: StatusPoll }) {
  const stationSet = status.data?.station.configured ?? false;
  const failed = jobs.filter((d) => rank(d, stationSet) === 0).length;
  const notYet = jobs.filter((d) => rank(d, stationSet) !== 0 && d.state.last_success_at === null).length;
  const running = status.busy ? ' A backup is running now.' : '';
  if (failed > 0)
    return (
      <p class="verdict bad" data-testid="verdict">
        {failed} of {jobsWord(jobs.length)} failed: see below.
      </p>
    );
  if (!stationSet)
    return (
      <p class="verdict warn" data-testid="verdict">
        No Station is set, so nothing is backed up off this host yet:{' '}
        <a href="/settings" onClick={(event) => linkClick(event, '/settings')}>
          set the Station
        </a>
        .{running}
      </p>
    );
  if (notYet > 0)
    return (
      <p class="verdict warn" data-testid="verdict">
        {notYet} of {jobsWord(jobs.length)} not backed up yet.{running}
      </p>
    );
  return (
    <p class="verdict ok" data-testid="verdict">
      All {jobsWord(jobs.length)} backed up.{running}
    </p>
  );
}

export function JobsGlance({ status, dirs }: { status: StatusPoll; dirs: Polled<DirectoryList> }) {
  const list = dirs.data;
  const next = status.data?.scheduler.next_run_at ?? null;
  const stationSet = status.data?.station.configured ?? false;
  const jobs = list ? sortedJobs(list.directories, stationSet) : [];
  return (
    <Section title="Backups">
      <ErrorText error={dirs.error} />
      {status.data?.scan_root_problem ? (
        <p class="error" data-testid="scan-root-problem">
          No job can be found: {status.data.scan_root_problem}.
        </p>
      ) : null}
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
          <Verdict jobs={jobs} status={status} />
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
  dir: DirectoryView;
  next: string | null;
  status: StatusPoll;
  onChanged: () => Promise<void>;
}) {
  const action = useAction();
  const name = jobLabel(dir);
  const stationSet = status.data?.station.configured ?? false;
  const stale = staleFailure(dir, stationSet);
  const error =
    dir.config_error ?? (dir.state.last_status === 'failed' && !stale ? dir.state.last_error : null);
  return (
    <tr data-job={dir.relative_path} class={rank(dir, stationSet) === 0 ? 'failed' : undefined}>
      <th scope="row" class="name">
        <a
          href={folderUrl(dir.relative_path)}
          onClick={(event) => linkClick(event, folderUrl(dir.relative_path))}
        >
          {name}
        </a>
      </th>
      <td data-label="Last result">
        <StatusBadge dir={dir} stationSet={stationSet} />
        {error ? <small class="job-error">{error}</small> : null}
        {stale ? <small class="muted job-staged">{STALE_NOTE}</small> : null}
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
        {dir.config ? (
          <small class="muted job-staged" data-testid="snapshot-detection">
            {dir.state.last_snapshot_at ? (
              <>
                files read <Time value={dir.state.last_snapshot_at} />
              </>
            ) : (
              'no snapshot yet'
            )}{' '}
            · changes by {dir.config.change_detection === 'mtimes' ? 'size and time' : 'size'}
          </small>
        ) : null}
      </td>
      <td data-label="Next run">{next ? <Time value={next} /> : '—'}</td>
      <td class="row-actions">
        <button
          type="button"
          disabled={action.busy || dir.config === null || status.busy}
          aria-label={`Back up ${name} now`}
          title={next ? `Otherwise the next cycle runs ${localTime(next)}` : undefined}
          onClick={async () => {
            const reply = await action.run(() =>
              api.post<OperationReply>(scoutPaths.jobRunNow, {
                relative_path: dir.relative_path,
              } satisfies DirectoryPathBody),
            );
            if (reply?.status === 'already_running')
              action.setError('An operation is already running; nothing extra was scheduled.');
            // Started: the operation card above shows it, and the row's result when it ends.
            await Promise.all([status.reload(), onChanged()]);
          }}
        >
          Back up now
        </button>
        <ErrorText error={action.error} />
      </td>
    </tr>
  );
}
