import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { DirectoryList } from '../../src/shared/protocol/scout-jobs.ts';
import type {
  OperationReply,
  ScoutStatus,
  StationContactView,
} from '../../src/shared/protocol/scout-status.ts';
import type { UploadPauseReply } from '../../src/shared/protocol/settings.ts';
import { api } from '../common/api.ts';
import { localTime } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { Cron, ErrorText, Notice, Section, Time, useAction } from '../common/ui.tsx';
import { JobsGlance } from './jobs-glance.tsx';
import { KeyBanner } from './key-banner.tsx';
import { OperationCard } from './operation.tsx';
import { type StatusPoll, useScoutStatus, useWhenIdle } from './status.ts';

function Link({ to, children }: { to: string; children: ComponentChildren }) {
  return (
    <a href={to} onClick={(event) => linkClick(event, to)}>
      {children}
    </a>
  );
}

/**
 * Whether the Station answered the Scout's own last request (an upload, a restore, a drill,
 * the restore-request list), chosen by its code; "Check now" has the Scout ask again.
 */
function StationReach({
  station,
  onChecked,
}: {
  station: StationContactView;
  onChecked: () => Promise<void>;
}) {
  const check = useAction();
  const button = (
    <button
      type="button"
      class="small"
      disabled={check.busy}
      onClick={async () => {
        await check.run(() => api.post(scoutPaths.stationCheck));
        await onChecked();
      }}
    >
      {check.busy ? 'Checking…' : 'Check now'}
    </button>
  );
  if (!station.configured) {
    return (
      <span>
        <span class="badge warn">not configured</span> <Link to="/settings">Set it up</Link>
      </span>
    );
  }
  if (station.reachable === null) {
    return (
      <span>
        <span class="muted">not contacted yet</span> {button}
        <ErrorText error={check.error} />
      </span>
    );
  }
  const [tone, text] = reachText(station);
  return (
    <span data-testid="station-reach">
      <span class={`badge ${tone}`} data-code={station.code ?? undefined}>
        {text}
      </span>{' '}
      <small class="muted">
        <Time value={station.checked_at} />
      </small>{' '}
      {button}
      {station.code === 'not_bound' ? (
        <small class="muted"> The Station ties the token to this Scout at its first upload.</small>
      ) : station.detail && tone !== 'ok' ? (
        <small class="error-inline">{station.detail}</small>
      ) : null}
      <ErrorText error={check.error} />
    </span>
  );
}

/** The badge of the last contact, by its code. */
function reachText(station: StationContactView): [string, string] {
  if (!station.reachable) return ['bad', 'not reachable'];
  switch (station.code) {
    case null:
      return ['ok', 'reachable, token accepted'];
    case 'not_bound':
      return ['ok', 'reachable; token not yet bound'];
    case 'token_rejected':
      return ['bad', 'reachable, token refused'];
    case 'forbidden':
    case 'binding_conflict':
      return ['bad', 'reachable, token not for this instance'];
    case 'station_error':
    case 'unavailable':
      return ['warn', 'reachable, Station failing'];
    default: {
      // A refusal about one request (a snapshot not found, an expired restore request): the
      // Station answered with the token accepted.
      return ['ok', 'reachable, token accepted'];
    }
  }
}

/** The upload circuit in plain words: whether uploads go ahead or wait after failed cycles. */
const CIRCUIT: Record<string, [string, string]> = {
  closed: ['ok', 'going ahead normally'],
  open: ['bad', 'on hold: the Station could not be reached, so scheduled backups wait'],
  half_open: ['warn', 'trying again: the next backup tries the Station once'],
};

function Identity({ s, onChecked }: { s: ScoutStatus; onChecked: () => Promise<void> }) {
  const circuit = CIRCUIT[s.upload_circuit.state] ?? ['warn', s.upload_circuit.state];
  return (
    <Section title="This Scout and its Station">
      <dl class="facts">
        <dt>Scout ID</dt>
        <dd>
          <code data-testid="scout-id">{s.scout_id}</code>
        </dd>
        <dt>Instance ID</dt>
        <dd>
          <code data-testid="instance-id">{s.scout_instance_id}</code>
        </dd>
        <dt>Scout key fingerprint</dt>
        <dd>
          <code data-testid="key-fingerprint">{s.key_fingerprint}</code>
          {s.key_saved_at ? (
            <small class="muted">
              {' '}
              · copy saved <Time value={s.key_saved_at} />
            </small>
          ) : null}
        </dd>
        <dt>Scan root</dt>
        <dd>
          <code data-testid="scan-root">{s.scan_root}</code>{' '}
          <small class="muted">(SCAN_ROOT: the folder searched for jobs)</small>
        </dd>
        <dt>Station</dt>
        <dd>
          {s.settings === undefined ? (
            <span class="muted">visible to admins</span>
          ) : s.settings.station_url ? (
            <code>{s.settings.station_url}</code>
          ) : (
            <span class="muted">not set</span>
          )}
        </dd>
        <dt>Station reachable</dt>
        <dd>
          <StationReach station={s.station} onChecked={onChecked} />
        </dd>
        <dt>Uploads to the Station</dt>
        <dd data-testid="upload-circuit">
          <span class={`badge ${circuit[0]}`}>{circuit[1]}</span>
          {s.upload_circuit.consecutive_failures > 0 ? (
            <> · {s.upload_circuit.consecutive_failures} cycle(s) in a row could not reach the Station</>
          ) : null}
          {s.upload_circuit.retry_at ? (
            <>
              {' '}
              · tries again <Time value={s.upload_circuit.retry_at} /> (Back up now always tries)
            </>
          ) : null}
        </dd>
      </dl>
    </Section>
  );
}

function Uploads({ status }: { status: StatusPoll }) {
  const { user } = useSession();
  const action = useAction();
  const paused = status.data?.uploads_paused ?? false;
  return (
    <Section
      title="Uploads"
      actions={
        user.is_admin ? (
          <button
            type="button"
            disabled={action.busy}
            onClick={async () => {
              await action.run(() =>
                api.post<UploadPauseReply>(paused ? scoutPaths.uploadsResume : scoutPaths.uploadsPause),
              );
              await status.reload();
            }}
          >
            {paused ? 'Resume uploads' : 'Pause uploads'}
          </button>
        ) : null
      }
    >
      <p>
        {paused ? (
          <>
            <span class="badge warn">paused</span> Cycles still pack changed jobs, but keep the archives
            staged here until uploads are resumed.
          </>
        ) : (
          <>
            <span class="badge ok">active</span> Changed jobs are uploaded to the Station.
          </>
        )}
      </p>
      <ErrorText error={action.error} />
    </Section>
  );
}

function Schedule({ status }: { status: StatusPoll }) {
  const action = useAction();
  const [queued, setQueued] = useState(false);
  useWhenIdle(status.busy, () => setQueued(false));
  const s = status.data as ScoutStatus;
  return (
    <Section
      title="Schedule"
      actions={
        <button
          type="button"
          class="primary"
          disabled={action.busy}
          onClick={async () => {
            setQueued(false);
            const answer = await action.run(() => api.post<OperationReply>(scoutPaths.runNow));
            if (answer?.status === 'already_running')
              action.setError('An operation is already running; nothing extra was scheduled.');
            else if (answer) setQueued(true);
            await status.reload();
          }}
        >
          Back up all jobs now
        </button>
      }
    >
      <dl class="facts">
        <dt>Scheduler</dt>
        <dd>
          <span class={`badge ${s.scheduler.state === 'idle' ? 'ok' : 'warn'}`}>{s.scheduler.state}</span>
          {s.run_now_requested ? ' · a backup is about to start' : null}
        </dd>
        <dt>Backup schedule</dt>
        <dd data-testid="cron">
          <Cron expression={s.scheduler.cron_schedule} />
        </dd>
        <dt>Next cycle</dt>
        <dd>
          {s.scheduler.next_run_at ? (
            <>
              {localTime(s.scheduler.next_run_at)} (<Time value={s.scheduler.next_run_at} />)
            </>
          ) : (
            '—'
          )}
        </dd>
        <dt>Last cycle started</dt>
        <dd>
          {s.scheduler.last_started_at ? <Time value={s.scheduler.last_started_at} /> : 'not since start-up'}
        </dd>
        <dt>Last cycle finished</dt>
        <dd>{s.scheduler.last_finished_at ? <Time value={s.scheduler.last_finished_at} /> : '—'}</dd>
        {s.settings ? (
          <>
            <dt>Restore drills</dt>
            <dd data-testid="drill-schedule">
              {s.settings.drill_schedule ? (
                <Cron expression={s.settings.drill_schedule} />
              ) : (
                'off (no drill schedule)'
              )}
            </dd>
          </>
        ) : null}
      </dl>
      {queued && status.busy ? (
        <Notice>Backup of all jobs started: every job whose files changed is uploaded.</Notice>
      ) : null}
      <ErrorText error={action.error} />
    </Section>
  );
}

/** `/`: are my backups OK? Every job's last result first, then this Scout, its Station and schedule. */
export function StatusPage() {
  const status = useScoutStatus();
  const dirs = usePoll(() => api.get<DirectoryList>(scoutPaths.directories), status.interval);
  useWhenIdle(status.busy, () => void dirs.reload());
  const s = status.data;
  return (
    <>
      <h1>Status</h1>
      {status.error && s ? <ErrorText error={`Could not refresh: ${status.error}`} /> : null}
      {!s ? (
        status.error ? (
          <ErrorText error={status.error} />
        ) : (
          <p aria-busy="true">Loading…</p>
        )
      ) : (
        <>
          <KeyBanner status={status} />
          <OperationCard status={status} showIdle />
          <JobsGlance status={status} dirs={dirs} />
          <div class="grid">
            <Identity s={s} onChecked={status.reload} />
            <Schedule status={status} />
          </div>
          <Uploads status={status} />
        </>
      )}
    </>
  );
}
