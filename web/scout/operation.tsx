import { useRef } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { OperationReply, OperationView } from '../../src/shared/protocol/scout-status.ts';
import { api } from '../common/api.ts';
import { formatBytes, formatRate } from '../common/format.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Notice, ProgressBar, Time, useAction } from '../common/ui.tsx';
import type { StatusPoll } from './status.ts';

export const KIND_LABELS: Record<string, string> = {
  cycle: 'Backup cycle',
  force_send: 'Forced upload',
  restore: 'Restore',
  drill: 'Restore drill',
};

interface Sample {
  key: string;
  bytes: number;
  at: number;
  rate: number | null;
}

/** Bytes per second between the last two status reads of the same phase. */
function useRate(op: OperationView | null, loadedAt: number | null): number | null {
  const last = useRef<Sample | null>(null);
  if (!op || loadedAt === null) {
    last.current = null;
    return null;
  }
  const key = `${op.started_at}|${op.kind}|${op.phase}`;
  const prev = last.current;
  let next = prev;
  if (!prev || prev.key !== key) {
    next = { key, bytes: op.bytes_done, at: loadedAt, rate: null };
  } else if (loadedAt > prev.at) {
    const rate = (op.bytes_done - prev.bytes) / ((loadedAt - prev.at) / 1000);
    next = { key, bytes: op.bytes_done, at: loadedAt, rate: rate > 0 ? rate : prev.rate };
  }
  last.current = next;
  return next?.rate ?? null;
}

/** The running operation: what, which phase, a progress bar, bytes, rate, and Cancel. */
export function OperationCard({ status, showIdle = false }: { status: StatusPoll; showIdle?: boolean }) {
  const { user } = useSession();
  const op = status.data?.operation ?? null;
  const rate = useRate(op, status.loadedAt);
  const cancel = useAction();
  const cancelled = useRef<string | null>(null);
  if (!op) {
    if (!showIdle) return null;
    return (
      <p class="muted idle-line" role="status">
        {status.data?.run_now_requested ? 'A backup cycle is about to start.' : 'Nothing is running.'}
      </p>
    );
  }
  const total = op.bytes_total > 0 ? op.bytes_total : null;
  const done = total === null ? op.bytes_done : Math.min(op.bytes_done, total);
  const cancelling = status.data?.scheduler.state === 'cancelling' || cancelled.current === op.started_at;
  return (
    <section class="card operation" aria-label="Operation">
      <header class="card-head">
        <h2>
          {KIND_LABELS[op.kind] ?? op.kind}
          {op.job_name ? <> · {op.job_name}</> : null}
        </h2>
        {user.is_admin ? (
          <div class="actions">
            <button
              type="button"
              disabled={cancel.busy || cancelling}
              onClick={async () => {
                const reply = await cancel.run(() => api.post<OperationReply>(scoutPaths.cancelOperation));
                if (reply?.status === 'cancelling') cancelled.current = op.started_at;
                await status.reload();
              }}
            >
              {cancelling ? 'Cancelling…' : 'Cancel'}
            </button>
          </div>
        ) : null}
      </header>
      <p class="op-phase">
        <span class="badge">{op.phase}</span>{' '}
        {total === null ? (
          op.bytes_done > 0 ? (
            formatBytes(op.bytes_done)
          ) : (
            ''
          )
        ) : (
          <>
            {formatBytes(done)} of {formatBytes(total)} ({Math.floor((done / total) * 100)} %)
          </>
        )}
        {rate ? <> · {formatRate(rate)}</> : null} · started <Time value={op.started_at} />
        {op.problems > 0 ? (
          <>
            {' '}
            · <span class="badge warn">{op.problems === 1 ? '1 problem' : `${op.problems} problems`}</span>
          </>
        ) : null}
      </p>
      <ProgressBar value={done} max={total} label="Operation progress" />
      {cancelling ? (
        <Notice>Cancelling: the operation stops at its next check; a staged archive is kept.</Notice>
      ) : null}
      <ErrorText error={cancel.error} />
    </section>
  );
}
