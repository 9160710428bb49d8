import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { DrillRunBody } from '../../src/shared/protocol/drills.ts';
import type { DirectoryPathBody, DirectoryView } from '../../src/shared/protocol/scout-jobs.ts';
import type { OperationReply } from '../../src/shared/protocol/scout-status.ts';
import { api } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { cronPeriodDays, drillBadge, ProvenRestorable, WEEKLY_DAYS } from '../common/drill.tsx';
import { codeBadge, codeMeaning } from '../common/error-codes.ts';
import { localTime, shortTime } from '../common/format.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Notice, Time, useAction } from '../common/ui.tsx';
import { folderUrl, jobLabel } from './paths.ts';
import { type StatusPoll, useWhenIdle } from './status.ts';

const STATUS_BADGES: Record<string, [string, string]> = {
  never_run: ['', 'never run'],
  running: ['warn', 'running'],
  uploaded: ['ok', 'uploaded'],
  unchanged: ['ok', 'unchanged'],
  failed: ['bad', 'failed'],
  cancelled: ['warn', 'cancelled'],
};

/**
 * A failure that no longer holds: "no Station configured" from before the Station was set. The
 * job is then waiting for its next backup, not failed.
 */
export function staleFailure(dir: DirectoryView, stationSet: boolean): boolean {
  return stationSet && dir.state.last_status === 'failed' && dir.state.last_error_code === 'not_configured';
}

/** The job's last result, and for a failure why, as a badge chosen by its `last_error_code`. */
export function StatusBadge({ dir, stationSet = false }: { dir: DirectoryView; stationSet?: boolean }) {
  if (dir.config_error) return <span class="badge bad">marker not valid</span>;
  if (staleFailure(dir, stationSet)) return <span class="badge warn">waiting for the next backup</span>;
  const [tone, text] = STATUS_BADGES[dir.state.last_status] ?? ['', dir.state.last_status];
  const code = dir.state.last_status === 'failed' ? (dir.state.last_error_code ?? null) : null;
  const reason = code ? codeBadge(code) : null;
  return (
    <>
      <span class={`badge ${tone}`}>{text}</span>
      {code && reason ? (
        <>
          {' '}
          <span
            class={`badge ${reason.tone}`}
            data-testid="error-code"
            data-code={code}
            title={codeMeaning(code) ?? undefined}
          >
            {reason.text}
          </span>
        </>
      ) : null}
    </>
  );
}

/**
 * Which change detection the job uses and when its files were last read in full (its newest
 * snapshot): with `sizes`, a same-size edit waits for the next fresh snapshot.
 */
export function Detection({ dir, freshDays }: { dir: DirectoryView; freshDays: number | undefined }) {
  if (!dir.config) return null;
  const mtimes = dir.config.change_detection === 'mtimes';
  return (
    <>
      <dt>Change detection</dt>
      <dd data-testid="change-detection">
        {mtimes ? 'names, sizes and modification times' : 'names and sizes'}{' '}
        <small class="api-name">({mtimes ? 'mtimes' : 'sizes'})</small>
      </dd>
      <dt>Last full snapshot</dt>
      <dd data-testid="last-full-snapshot">
        {dir.state.last_snapshot_at ? <Time value={dir.state.last_snapshot_at} /> : 'none yet'}
        {freshDays === undefined ? null : freshDays > 0 ? (
          <small class="muted"> · a fresh one at least every {freshDays} days</small>
        ) : (
          <small class="muted"> · no fresh one is forced (force_send_every_days is 0)</small>
        )}
      </dd>
    </>
  );
}

/** What replaces a stale "no Station configured" error. */
export const STALE_NOTE = 'The Station is set now: the next cycle (or Back up now) uploads this job.';

/**
 * "An archive from 20:48 is waiting": the next cycle uploads it first (it holds the files as
 * they were then), then backs up what changed since.
 */
export function StagedLine({ dir }: { dir: DirectoryView }) {
  const at = dir.state.staged_at;
  return (
    <span title={at ? localTime(at) : undefined}>
      {at ? <>An archive from {shortTime(at)} is waiting</> : 'An archive is waiting'} to be uploaded; the
      next backup sends it first, then what changed since.
    </span>
  );
}

/** "Left out: 3 entries" with the first paths: the last snapshot is incomplete. */
function SkippedFacts({ dir }: { dir: DirectoryView }) {
  const skipped = dir.state.last_skipped;
  if (!skipped) return null;
  const more = skipped.count - skipped.paths.length;
  return (
    <>
      <dt>Left out</dt>
      <dd data-testid="skipped">
        <span class="badge warn">
          {skipped.count} {skipped.count === 1 ? 'entry' : 'entries'}
        </span>{' '}
        not in the last snapshot (unreadable, vanished or not a file, folder or link):
        <ul class="skipped-paths">
          {skipped.paths.map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
          {more > 0 ? <li>and {more} more</li> : null}
        </ul>
      </dd>
    </>
  );
}

/** One job: its last result and error, and what can be done to it. Labelled by its job name. */
export function JobCard({
  dir,
  status,
  onChanged,
  heading = 'h3',
}: {
  dir: DirectoryView;
  status: StatusPoll;
  onChanged: () => unknown;
  heading?: 'h2' | 'h3';
}) {
  const { user } = useSession();
  const action = useAction();
  const [message, setMessage] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'clear' | 'delete' | null>(null);
  const name = jobLabel(dir);
  const op = status.data?.operation ?? null;
  const mine = op !== null && op.job_name === dir.config?.job_name;
  const Heading = heading;
  const stationSet = status.data?.station.configured ?? false;
  // The Scout's own drill_schedule (hidden from non-admins: then the default weekly one). A job
  // never drilled is flagged once its last successful backup is older than twice the period.
  const schedule = status.data?.settings?.drill_schedule;
  const period = schedule === undefined ? WEEKLY_DAYS : cronPeriodDays(schedule);
  const drillFlag = drillBadge(dir.state.last_drill, period, dir.state.last_success_at);

  // What was started is said while it runs; once the Scout is idle again the job's state says the rest.
  useWhenIdle(status.busy, () => setMessage(null));

  async function start(label: string, call: () => Promise<OperationReply>, queued: string) {
    setMessage(null);
    const reply = await action.run(call);
    if (!reply) return;
    if (reply.status === 'already_running') {
      action.setError(`${label}: an operation is already running; nothing extra was scheduled.`);
    } else {
      setMessage(queued);
    }
    await Promise.all([status.reload(), onChanged()]);
  }

  return (
    <article class="job card" aria-label={name}>
      <header class="card-head">
        <Heading>
          <a
            href={folderUrl(dir.relative_path)}
            onClick={(event) => linkClick(event, folderUrl(dir.relative_path))}
          >
            {name}
          </a>
        </Heading>
        <StatusBadge dir={dir} stationSet={stationSet} />
      </header>
      <dl class="facts">
        <dt>Folder</dt>
        <dd>
          <code>{dir.relative_path}</code>
        </dd>
        <dt>Last attempt</dt>
        <dd>
          <Time value={dir.state.last_attempt_at} />
        </dd>
        <dt>Last success</dt>
        <dd>
          <Time value={dir.state.last_success_at} />
        </dd>
        <dt>Last snapshot</dt>
        <dd>{dir.state.last_stored_as ? <code class="filename">{dir.state.last_stored_as}</code> : '—'}</dd>
        <Detection dir={dir} freshDays={status.data?.settings?.force_send_every_days} />
        <ProvenRestorable drill={dir.state.last_drill} badge={drillFlag} />
        <SkippedFacts dir={dir} />
        {dir.state.staged ? (
          <>
            <dt>Waiting</dt>
            <dd data-testid="staged">
              <StagedLine dir={dir} />
            </dd>
          </>
        ) : null}
      </dl>
      {dir.config_error ? (
        <p class="error">
          <strong>Marker not valid:</strong> {dir.config_error}
        </p>
      ) : null}
      {staleFailure(dir, stationSet) ? (
        <p class="muted">{STALE_NOTE}</p>
      ) : dir.state.last_error ? (
        <p class="error">
          <strong>Last error:</strong> {dir.state.last_error}
        </p>
      ) : null}
      <div class="actions">
        <button
          type="button"
          class="primary"
          disabled={action.busy || dir.config === null || status.busy}
          aria-describedby="run-now-hint"
          onClick={() =>
            start(
              'Back up now',
              () =>
                api.post<OperationReply>(scoutPaths.jobRunNow, {
                  relative_path: dir.relative_path,
                } satisfies DirectoryPathBody),
              `Backup of ${name} started: it is uploaded if its files changed.`,
            )
          }
        >
          Back up now
        </button>
        <button
          type="button"
          disabled={action.busy || dir.config === null}
          onClick={() =>
            start(
              'Run a drill',
              () =>
                api.post<OperationReply>(scoutPaths.runDrills, {
                  relative_path: dir.relative_path,
                } satisfies DrillRunBody),
              `Restore drill of ${name} started: its newest snapshot is read back from the Station.`,
            )
          }
        >
          Run a drill
        </button>
        {user.is_admin ? (
          <>
            <button
              type="button"
              disabled={action.busy || dir.config === null}
              onClick={() =>
                start(
                  'Force send',
                  () =>
                    api.post<OperationReply>(scoutPaths.forceSend, {
                      relative_path: dir.relative_path,
                    } satisfies DirectoryPathBody),
                  `Fresh snapshot of ${name} started.`,
                )
              }
            >
              Force send
            </button>
            <button
              type="button"
              disabled={action.busy || !dir.state.staged}
              title={dir.state.staged ? undefined : 'No archive is waiting for this job'}
              onClick={() => setConfirm('clear')}
            >
              Clear staged
            </button>
            {mine ? (
              <button
                type="button"
                disabled={action.busy}
                onClick={async () => {
                  setMessage(null);
                  const reply = await action.run(() => api.post<OperationReply>(scoutPaths.cancelOperation));
                  if (reply)
                    setMessage(reply.status === 'cancelling' ? 'Cancelling…' : 'Nothing was running.');
                  await status.reload();
                }}
              >
                Cancel
              </button>
            ) : null}
            <button
              type="button"
              class="danger-outline delete-job"
              disabled={action.busy}
              onClick={() => setConfirm('delete')}
            >
              Delete job…
            </button>
          </>
        ) : null}
      </div>
      {message ? <Notice>{message}</Notice> : null}
      <ErrorText error={action.error} />
      {confirm === 'clear' ? (
        <ConfirmDialog
          title={`Clear the staged archive of ${name}?`}
          confirmLabel="Clear staged archive"
          onClose={() => setConfirm(null)}
          onConfirm={async () => {
            await api.post(scoutPaths.clearStaged, {
              relative_path: dir.relative_path,
            } satisfies DirectoryPathBody);
            setMessage('Staged archive cleared.');
            await onChanged();
          }}
        >
          <p>
            {dir.state.staged
              ? 'The archive packed for upload but not yet uploaded is deleted from this host.'
              : 'No archive is staged for this job right now.'}{' '}
            The job's retry and review state is cleared too, so the next cycle or a force send packs the
            folder again (picking up same-size edits and new exclusions). Nothing on the Station changes.
          </p>
          <p>Refused while an operation runs.</p>
        </ConfirmDialog>
      ) : null}
      {confirm === 'delete' ? (
        <ConfirmDialog
          title={`Delete the job ${name}?`}
          confirmLabel="Delete job"
          onClose={() => setConfirm(null)}
          onConfirm={async () => {
            await api.post(scoutPaths.deleteJob, {
              relative_path: dir.relative_path,
            } satisfies DirectoryPathBody);
            await onChanged();
          }}
        >
          <p>
            This removes the <code>.upload_dir</code> marker from <code>{dir.relative_path}</code> and this
            Scout's local state for the job, including an archive staged but not yet uploaded. The folder is
            no longer backed up.
          </p>
          <p>
            <strong>Kept:</strong> every file in the folder, and the snapshots already on the Station.
          </p>
        </ConfirmDialog>
      ) : null}
    </article>
  );
}
