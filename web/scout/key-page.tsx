import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  ConfirmKeyBody,
  KeyConfirmed,
  RotatedKey,
  ScoutKeyView,
} from '../../src/shared/protocol/scout-recovery.ts';
import { api } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { CopyButton, ErrorText, Field, Notice, Section, Time, useAction } from '../common/ui.tsx';
import { downloadKeyFile, fetchKey as getKey } from './key-file.ts';
import { useScoutStatus } from './status.ts';

/** "I already keep a copy": its fingerprint, checked against the key (POST /api/encryption-key/confirm). */
function ConfirmCopy({ onConfirmed }: { onConfirmed: () => Promise<void> }) {
  const [fingerprint, setFingerprint] = useState('');
  const action = useAction();
  return (
    <Section title="Already keep a copy?">
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const reply = await action.run(() =>
            api.post<KeyConfirmed>(scoutPaths.confirmKey, {
              fingerprint: fingerprint.trim(),
            } satisfies ConfirmKeyBody),
          );
          if (reply) await onConfirmed();
        }}
      >
        <Field
          label="Fingerprint of your copy"
          value={fingerprint}
          onInput={setFingerprint}
          spellcheck={false}
          autoComplete="off"
          hint={
            <>
              The <code># fingerprint:</code> line of the key file you keep. It must match the key above.
            </>
          }
        />
        <ErrorText error={action.error} />
        <div class="actions">
          <button type="submit" disabled={action.busy || fingerprint.trim() === ''}>
            Confirm my copy
          </button>
        </div>
      </form>
    </Section>
  );
}

/** `/key`: the Scout key's fingerprint, reveal, download as an age identity, and rotation. */
export function KeyPage() {
  const status = useScoutStatus();
  const [key, setKey] = useState<ScoutKeyView | null>(null);
  const [revealed, setRevealed] = useState(false);
  const [rotating, setRotating] = useState(false);
  const [rotated, setRotated] = useState<string | null>(null);
  const action = useAction();
  const scoutId = status.data?.scout_id ?? 'scout';
  const fingerprint = key?.fingerprint ?? status.data?.key_fingerprint ?? null;

  async function fetchKey(): Promise<ScoutKeyView> {
    const fresh = await getKey();
    setKey(fresh);
    void status.reload();
    return fresh;
  }

  return (
    <>
      <h1>Scout key</h1>
      <Section title="The key that encrypts this Scout's snapshots">
        <dl class="facts">
          <dt>Fingerprint</dt>
          <dd>
            <code data-testid="key-fingerprint">{fingerprint ?? '…'}</code>
          </dd>
          <dt>Copy kept</dt>
          <dd data-testid="key-saved">
            {status.data?.key_saved_at ? (
              <>
                yes: fetched or confirmed <Time value={status.data.key_saved_at} />
              </>
            ) : status.data ? (
              <span class="badge warn">not yet</span>
            ) : (
              '…'
            )}
          </dd>
        </dl>
        <p class="key-warning">
          <strong>Keep a copy of this key somewhere other than this host.</strong> The Station stores only
          encrypted snapshots and never sees the key: if this host and its data folder are lost, the snapshots
          can be restored only with a copy of the key. Anyone with the key can read them.
        </p>
        <div class="actions">
          <button
            type="button"
            onClick={async () => {
              if (revealed) {
                setRevealed(false);
                return;
              }
              if (await action.run(fetchKey)) setRevealed(true);
            }}
            aria-expanded={revealed}
            disabled={action.busy}
          >
            {revealed ? 'Hide key' : 'Reveal key'}
          </button>
          <button
            type="button"
            class="primary"
            disabled={action.busy}
            onClick={async () => {
              const fresh = await action.run(() => downloadKeyFile(scoutId));
              if (fresh) {
                setKey(fresh);
                await status.reload();
              }
            }}
          >
            Download key file
          </button>
        </div>
        <p class="hint">
          The file is an age identity: <code>age -d -i key.txt snapshot.tar.zst | zstd -d | tar -x</code>{' '}
          restores a snapshot without backupd.
        </p>
        <ErrorText error={action.error} />
        {revealed && key ? (
          <div class="secret">
            <p>
              <strong>Scout key</strong> (paste this as the source Scout key when another Scout restores these
              snapshots)
            </p>
            <code class="secret-value" data-testid="scout-key">
              {key.key_base64}
            </code>
            <CopyButton text={key.key_base64} label="Copy key" />
            <p>
              <strong>The same key as an age identity</strong>
            </p>
            <code class="secret-value" data-testid="age-identity">
              {key.age_identity}
            </code>
            <CopyButton text={key.age_identity} label="Copy identity" />
          </div>
        ) : null}
      </Section>
      {status.data && !status.data.key_saved_at ? <ConfirmCopy onConfirmed={status.reload} /> : null}
      <Section title="Rotate the key">
        <p>
          Rotating makes a new key for every snapshot from now on. Snapshots already made stay encrypted with
          the old key: this Scout keeps the old key so it can still restore them, but if this host is lost
          they need your copy of the old key. Download the new key after rotating.
        </p>
        {rotated ? (
          <Notice>
            Rotated. The new fingerprint is <code>{rotated}</code>. Download the new key file now and keep it
            off this host, next to the old one.
          </Notice>
        ) : null}
        <div class="actions">
          <button type="button" class="danger" onClick={() => setRotating(true)}>
            Rotate key…
          </button>
        </div>
      </Section>
      {rotating ? (
        <ConfirmDialog
          title="Rotate the Scout key?"
          confirmLabel="Rotate key"
          onClose={() => setRotating(false)}
          onConfirm={async () => {
            const reply = await api.post<RotatedKey>(scoutPaths.rotateKey);
            setKey(reply);
            setRevealed(false);
            setRotated(reply.new_fingerprint);
            await status.reload();
          }}
        >
          <p>
            A new Scout key replaces <code>{fingerprint?.slice(0, 16)}…</code> for every snapshot made from
            now on. Existing snapshots on the Station are not re-encrypted: they still need the old key. This
            Scout keeps the old key in its keyring, so its own restores keep working; a copy off this host is
            what saves them if the host is lost.
          </p>
          <p>Refused while an operation runs.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
