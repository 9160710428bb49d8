import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { RestoreRequestView } from '../../src/shared/protocol/recovery.ts';
import type { RestoreDecided, RestoreDecisionBody } from '../../src/shared/protocol/restore-requests.ts';
import { api, errorText } from '../common/api.ts';
import { Dialog, DialogActions } from '../common/dialog.tsx';
import { formatBytes } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Field, Notice, Section, TableHead, Time, useAction } from '../common/ui.tsx';
import { IDLE_MS, type StatusPoll } from './status.ts';

/** " 2 entries not restored: a: …; b: …" (the first three), or ''. */
function problemLine(reply: RestoreDecided): string {
  const count = reply.problem_count ?? 0;
  if (count === 0) return '';
  const first = (reply.problems ?? []).slice(0, 3).map((p) => `${p.path}: ${p.message}`);
  return ` ${count} ${count === 1 ? 'entry' : 'entries'} not restored (or only in part): ${first.join('; ')}${count > 3 ? '; …' : ''}`;
}

const BADGES: Record<string, string> = {
  pending: 'warn',
  accepted: 'warn',
  completed: 'ok',
  rejected: '',
  expired: 'bad',
};

function AcceptDialog({
  request,
  foreign,
  onClose,
  onDone,
}: {
  request: RestoreRequestView;
  foreign: boolean;
  onClose: () => void;
  onDone: (reply: RestoreDecided) => void;
}) {
  const [folder, setFolder] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title="Accept the restore request" onClose={onClose}>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const reply = await api.post<RestoreDecided>(scoutPaths.restoreDecision, {
              id: request.id,
              decision: 'accept',
              ...(folder.trim() ? { relative_path: folder.trim() } : {}),
              ...(key.trim() ? { encryption_key: key.trim() } : {}),
            } satisfies RestoreDecisionBody);
            if (reply.status === 'already_running') {
              setError('Another operation is running; wait for it to end (or cancel it), then accept again.');
              return;
            }
            onDone(reply);
            onClose();
          } catch (err) {
            setError(errorText(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="dialog-body">
          <p>
            Snapshot <code>{request.filename}</code> of the job <strong>{request.job_name}</strong> is
            downloaded from the Station and restored into a folder directly under the scan root. Files with
            the same paths there are replaced; other files are left alone.
          </p>
          <Field
            label="Folder"
            value={folder}
            onInput={setFolder}
            placeholder={request.job_name}
            spellcheck={false}
            autoComplete="off"
            hint={`Optional: one folder name under the scan root. Empty restores into ${request.job_name}.`}
          />
          <Field
            label="Source Scout key"
            value={key}
            onInput={setKey}
            type="password"
            spellcheck={false}
            autoComplete="off"
            hint={
              foreign
                ? `Optional, but needed unless this Scout holds it: the snapshot was made by ${request.source_scout_id}; paste that Scout's key (its Scout key page, Reveal key). It is used for this restore only.`
                : 'Optional: only for a snapshot made with a key this Scout no longer has. It is used for this restore only.'
            }
          />
        </div>
        <DialogActions error={error} busy={busy} onCancel={onClose}>
          {busy ? 'Restoring…' : 'Accept and restore'}
        </DialogActions>
      </form>
    </Dialog>
  );
}

function RequestRow({
  request,
  instanceId,
  onChanged,
}: {
  request: RestoreRequestView;
  instanceId: string | undefined;
  onChanged: (message: string) => unknown;
}) {
  const { user } = useSession();
  const [accepting, setAccepting] = useState(false);
  const action = useAction();
  const foreign = instanceId !== undefined && request.source_instance_id !== instanceId;
  const pending = request.status === 'pending';
  return (
    <tr>
      <td data-label="Requested">
        <Time value={request.created_at} />
      </td>
      <td data-label="Job">{request.job_name}</td>
      <td class="notes" data-label="Snapshot">
        <code class="filename">{request.filename}</code>
      </td>
      <td data-label="Made by">
        {foreign ? (
          <>
            {request.source_scout_id} <small class="muted">({request.source_instance_id.slice(0, 8)}…)</small>
          </>
        ) : (
          'this Scout'
        )}
      </td>
      <td data-label="Status">
        <span class={`badge ${BADGES[request.status] ?? ''}`}>{request.status}</span>
        {pending && request.expires_at ? (
          <small class="muted">
            {' '}
            expires <Time value={request.expires_at} />
          </small>
        ) : null}
      </td>
      <td class="row-actions">
        {pending && user.is_admin ? (
          <div class="actions">
            <button type="button" class="primary" onClick={() => setAccepting(true)}>
              Accept
            </button>
            <button
              type="button"
              disabled={action.busy}
              onClick={async () => {
                const reply = await action.run(() =>
                  api.post<RestoreDecided>(scoutPaths.restoreDecision, {
                    id: request.id,
                    decision: 'reject',
                  } satisfies RestoreDecisionBody),
                );
                if (reply) await onChanged(`Rejected the request for ${request.filename}.`);
              }}
            >
              Reject
            </button>
          </div>
        ) : null}
        <ErrorText error={action.error} />
        {accepting ? (
          <AcceptDialog
            request={request}
            foreign={foreign}
            onClose={() => setAccepting(false)}
            onDone={(reply) =>
              onChanged(
                `Restored ${reply.snapshot ?? request.filename} into ${reply.relative_path ?? request.job_name}: ${reply.added ?? 0} added, ${reply.replaced ?? 0} replaced (${formatBytes(reply.bytes ?? 0)}).${problemLine(reply)}`,
              )
            }
          />
        ) : null}
      </td>
    </tr>
  );
}

/** Restore requests the Station holds for this Scout: accept (restore here) or reject. */
export function RestoreRequests({ status }: { status: StatusPoll }) {
  const requests = usePoll(() => api.get<RestoreRequestView[]>(scoutPaths.restoreRequests), IDLE_MS);
  const [message, setMessage] = useState<string | null>(null);
  const list = requests.data ?? [];
  return (
    <Section
      title="Restore requests from the Station"
      actions={
        <button type="button" onClick={() => void requests.reload()} disabled={requests.loading}>
          Refresh
        </button>
      }
    >
      <p class="hint">
        A Station admin can ask this Scout to restore a snapshot, also one made by another Scout. Nothing is
        restored until you accept. Requests expire an hour after they are made.
      </p>
      {message ? <Notice>{message}</Notice> : null}
      <ErrorText error={requests.error} />
      {requests.data === null ? null : list.length === 0 ? (
        <p class="muted">No restore requests.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <TableHead columns={['Requested', 'Job', 'Snapshot', 'Made by', 'Status']} actions />
            <tbody>
              {list.map((request) => (
                <RequestRow
                  key={request.id}
                  request={request}
                  instanceId={status.data?.scout_instance_id}
                  onChanged={async (text) => {
                    await Promise.all([requests.reload(), status.reload()]);
                    setMessage(text);
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
