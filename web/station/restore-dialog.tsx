/** "Request restore": asks the Station to offer one snapshot to its own or another instance. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobKey } from '../../src/shared/protocol/job-key.ts';
import type { InstanceList } from '../../src/shared/protocol/jobs.ts';
import type { RestoreRequestCreated } from '../../src/shared/protocol/restore-requests.ts';
import type { RestoreTargetBody } from '../../src/shared/protocol/snapshots.ts';
import { api } from '../common/api.ts';
import { Dialog, DialogActions } from '../common/dialog.tsx';
import { linkClick } from '../common/router.ts';
import { Notice, useAction } from '../common/ui.tsx';

export interface InstanceRef {
  scoutId: string;
  instanceId: string;
}

export function RestoreDialog({
  job,
  filename,
  onClose,
}: {
  job: JobKey;
  filename: string;
  onClose: () => void;
}) {
  const [target, setTarget] = useState('');
  // Every instance the Station knows; the source one is offered as "original".
  const [targets, setTargets] = useState<InstanceRef[]>([]);
  useEffect(() => {
    api
      .get<InstanceList>(stationPaths.instances)
      .then((list) =>
        setTargets(list.instances.map((i) => ({ scoutId: i.scout_id, instanceId: i.scout_instance_id }))),
      )
      .catch(() => setTargets([]));
  }, []);
  const [created, setCreated] = useState<RestoreRequestCreated | null>(null);
  const action = useAction();
  const others = targets.filter((t) => !(t.scoutId === job.scoutId && t.instanceId === job.instanceId));

  async function submit(event: Event) {
    event.preventDefault();
    const chosen = target === '' ? undefined : others[Number(target)];
    const body: RestoreTargetBody = chosen
      ? { target_scout_id: chosen.scoutId, target_instance_id: chosen.instanceId }
      : {};
    const answer = await action.run(() =>
      api.post<RestoreRequestCreated>(stationPaths.snapshotRestore(job, filename), body),
    );
    if (answer) {
      setCreated(answer);
    }
  }

  if (created) {
    const r = created.request;
    return (
      <Dialog title="Restore request sent" onClose={onClose}>
        <div class="dialog-body" data-testid="restore-created">
          <Notice>
            Restore request <code>{r.id}</code> for <code>{r.filename}</code> is <strong>{r.status}</strong>{' '}
            on {r.target_scout_id} / {r.target_instance_id}.
          </Notice>
          <p data-testid="restore-notified">
            {created.notified
              ? 'The Scout was notified and can accept the request now.'
              : 'The Scout could not be notified (it has no advertised URL or did not answer). The request waits on the Station; the Scout finds it when it next asks.'}
          </p>
          <p class="muted">
            The Scout has one hour to accept it. Nothing is restored until someone accepts it on that Scout.
          </p>
        </div>
        <div class="actions">
          <a
            href="/restores"
            onClick={(event) => {
              onClose();
              linkClick(event, '/restores');
            }}
          >
            See all restore requests
          </a>
          <button type="button" class="primary" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title="Request restore" onClose={onClose}>
      <form onSubmit={submit}>
        <div class="dialog-body">
          <p>
            Offer <code>{filename}</code> (job <strong>{job.jobName}</strong> from {job.scoutId} /{' '}
            {job.instanceId}) to a Scout instance. That Scout decides whether to restore it; the request
            expires after one hour.
          </p>
          <div class="field">
            <label for="restore-target">Target instance</label>
            <select
              id="restore-target"
              value={target}
              onChange={(event) => setTarget((event.target as HTMLSelectElement).value)}
            >
              <option value="">
                Original instance ({job.scoutId} / {job.instanceId})
              </option>
              {others.map((t, i) => (
                <option key={`${t.scoutId}/${t.instanceId}`} value={String(i)}>
                  {t.scoutId} / {t.instanceId}
                </option>
              ))}
            </select>
            <small class="hint">
              Another instance needs a bound Station token and the same Scout key to decrypt it.
            </small>
          </div>
        </div>
        <DialogActions error={action.error} busy={action.busy} onCancel={onClose}>
          {action.busy ? 'Sending…' : 'Send request'}
        </DialogActions>
      </form>
    </Dialog>
  );
}
