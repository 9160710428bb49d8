import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../common/api.ts';
import { localTime } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Notice, Section, Time, useAction } from '../common/ui.tsx';
import { OperationCard } from './operation.tsx';
import { IDLE_MS, type StatusPoll, useScoutStatus } from './status.ts';
import type { OperationReply, RestoreRequest, ScoutStatus } from './types.ts';

function Link({ to, children }: { to: string; children: ComponentChildren }) {
  return (
    <a href={to} onClick={(event) => linkClick(event, to)}>
      {children}
    </a>
  );
}

/**
 * Whether the Station answers with this Scout's token. The status has no such field, so this
 * reads the Scout's restore requests: the one call that goes to the Station and back.
 */
function StationReach() {
  const probe = usePoll(() => api.get<RestoreRequest[]>('/api/restore-requests').then(() => true), IDLE_MS);
  if (probe.data === null && probe.error === null) return <span class="muted">checking…</span>;
  if (probe.error === null) return <span class="badge ok">reachable, token accepted</span>;
  if (/no Station configured/i.test(probe.error)) {
    return (
      <span>
        <span class="badge warn">not configured</span> <Link to="/scout-settings">Set it up</Link>
      </span>
    );
  }
  if (/not bound to/i.test(probe.error)) {
    return (
      <span>
        <span class="badge ok">reachable; token not yet bound</span>{' '}
        <small class="muted">The Station ties the token to this Scout at its first upload.</small>
      </span>
    );
  }
  return (
    <span>
      <span class="badge bad">
        {/refused the Station token/i.test(probe.error) ? 'reachable, token refused' : 'not reachable'}
      </span>{' '}
      <span class="error-inline">{probe.error}</span>
    </span>
  );
}

const CIRCUIT: Record<string, [string, string]> = {
  closed: ['ok', 'closed: uploads go ahead'],
  open: ['bad', 'open: scheduled cycles skip uploads'],
  half_open: ['warn', 'half open: the next cycle tries once'],
};

function Identity({ s }: { s: ScoutStatus }) {
  const circuit = CIRCUIT[s.upload_circuit.state] ?? ['warn', s.upload_circuit.state];
  return (
    <Section title="This Scout">
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
          <StationReach />
        </dd>
        <dt>Upload circuit</dt>
        <dd>
          <span class={`badge ${circuit[0]}`}>{circuit[1]}</span>
          {s.upload_circuit.consecutive_failures > 0 ? (
            <> · {s.upload_circuit.consecutive_failures} cycle(s) in a row could not reach the Station</>
          ) : null}
          {s.upload_circuit.retry_at ? (
            <>
              {' '}
              · retries <Time value={s.upload_circuit.retry_at} /> (Run now always tries)
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
              await action.run(() => api.post(paused ? '/api/uploads/resume' : '/api/uploads/pause'));
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
            const answer = await action.run(() => api.post<OperationReply>('/api/run-now'));
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
          {s.run_now_requested ? ' · a run-now cycle is queued' : null}
        </dd>
        <dt>Cron schedule</dt>
        <dd>
          <code>{s.scheduler.cron_schedule}</code>
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
                <code>{s.settings.drill_schedule}</code>
              ) : (
                'off (no drill schedule)'
              )}
            </dd>
          </>
        ) : null}
      </dl>
      {queued && status.busy ? (
        <Notice>Backup cycle queued: every job whose files changed is backed up.</Notice>
      ) : null}
      <ErrorText error={action.error} />
    </Section>
  );
}

export function StatusPage() {
  const status = useScoutStatus();
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
          <OperationCard status={status} showIdle />
          <div class="grid">
            <Identity s={s} />
            <Schedule status={status} />
          </div>
          <Uploads status={status} />
        </>
      )}
    </>
  );
}
