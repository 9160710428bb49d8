/**
 * Minting a recovery token for an instance: a Station token bound to it at once, so a rebuilt
 * host can restore its snapshots with `backupd scout restore`. Optionally revokes the
 * instance's other tokens in the same step. The token is shown once, with the command line.
 */
import { useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { MintedRecoveryToken } from '../../src/shared/protocol/station-tokens.ts';
import { api } from '../common/api.ts';
import { Dialog, DialogActions } from '../common/dialog.tsx';
import { Checkbox, CopyButton, Field, Notice, SecretOnce, useAction } from '../common/ui.tsx';
import type { InstanceJobs } from './instance-delete.tsx';

/** The command a rebuilt host runs to restore one job of the instance with the token. */
export function recoveryCommand(
  credential: string,
  scoutId: string,
  instanceId: string,
  origin = location.origin,
): string {
  return `backupd scout restore --station-url ${origin} --token ${credential} --scout-id ${scoutId} --instance-id ${instanceId} --job <JOB> --dest <DIR> --key-file scout-key.txt`;
}

export function RecoveryTokenDialog({
  scoutId,
  instance,
  onClose,
}: {
  scoutId: string;
  instance: InstanceJobs;
  onClose: () => void;
}) {
  const [ttl, setTtl] = useState('30');
  const [revokeOthers, setRevokeOthers] = useState(false);
  const [minted, setMinted] = useState<MintedRecoveryToken | null>(null);
  const action = useAction();
  const instanceId = instance.scout_instance_id;

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = ttl.trim();
    const days = Number(trimmed);
    const body: Record<string, unknown> = {
      scout_id: scoutId,
      scout_instance_id: instanceId,
      revoke_other_tokens: revokeOthers,
    };
    if (trimmed !== '') body.ttl_days = Number.isFinite(days) ? days : trimmed;
    const answer = await action.run(() => api.post<MintedRecoveryToken>(stationPaths.mintStationToken, body));
    if (answer) setMinted(answer);
  }

  return (
    <Dialog title="Mint a recovery token" onClose={onClose}>
      {minted ? (
        <MintedRecovery minted={minted} instance={instance} onClose={onClose} />
      ) : (
        <form onSubmit={submit} noValidate>
          <div class="dialog-body">
            <p>
              A recovery token is bound to instance <code>{instanceId}</code> of Scout{' '}
              <strong>{scoutId}</strong> at once, so a rebuilt host can restore this instance's snapshots with
              it. It uploads for this instance only.
            </p>
            <Field
              label="Valid for (days)"
              id="recovery-ttl"
              type="number"
              inputMode="numeric"
              value={ttl}
              onInput={setTtl}
              hint="1 to 3650 days; 365 when left empty."
            />
            <Checkbox
              label="Revoke the instance's other tokens (a shared one stops on every instance it serves)"
              checked={revokeOthers}
              onChange={setRevokeOthers}
            />
            <p class="muted">
              Left unchecked, the instance's other tokens stay valid until you revoke them under Station
              tokens.
            </p>
          </div>
          <DialogActions error={action.error} busy={action.busy} onCancel={onClose}>
            {action.busy ? 'Minting…' : 'Mint recovery token'}
          </DialogActions>
        </form>
      )}
    </Dialog>
  );
}

function MintedRecovery({
  minted,
  instance,
  onClose,
}: {
  minted: MintedRecoveryToken;
  instance: InstanceJobs;
  onClose: () => void;
}) {
  const command = recoveryCommand(minted.credential, minted.scout_id, minted.scout_instance_id);
  const jobs = instance.jobs.map((job) => job.job_name);
  const revoked = minted.revoked_rows ?? 0;
  return (
    <div class="dialog-body minted" data-testid="recovery-minted">
      <Notice>
        {minted.message}
        {revoked > 0 ? ` Revoked ${revoked} other token${revoked === 1 ? '' : 's'}.` : ''}
      </Notice>
      <SecretOnce label="Recovery token" secret={minted.credential} testId="recovery-token" />
      <h3>Restore on the rebuilt host</h3>
      <p>
        Replace <code>&lt;JOB&gt;</code> with the job to restore
        {jobs.length > 0 ? (
          <>
            {' '}
            (this instance's jobs: <code>{jobs.join(', ')}</code>)
          </>
        ) : null}
        , <code>&lt;DIR&gt;</code> with the folder to restore into, and keep the Scout key (its age identity
        file) at <code>scout-key.txt</code>:
      </p>
      <pre class="env-lines" data-testid="recovery-command">
        {command}
      </pre>
      <div class="actions">
        <CopyButton text={command} label="Copy command" />
        <button type="button" onClick={onClose}>
          I have copied it
        </button>
      </div>
    </div>
  );
}
