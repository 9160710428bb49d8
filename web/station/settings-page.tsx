/** The Station's own part of Settings: retention, what was set at start-up, integrity verification. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Field, Notice, Section, useAction } from '../common/ui.tsx';
import type { Overview, StationSettings, Storage } from './types.ts';
import { VerifyCard } from './verify-card.tsx';

export function StationSettingsSections() {
  const { user } = useSession();
  const [storage, setStorage] = useState<Storage | null>(null);
  const [keep, setKeep] = useState('');
  const [within, setWithin] = useState('');
  const [saved, setSaved] = useState<StationSettings | null>(null);
  const load = useAction();
  const save = useAction();

  useEffect(() => {
    void load.run(async () => {
      const overview = await api.get<Overview>('/api/overview?section=settings');
      const withStorage = await api.get<Overview>('/api/overview?section=storage');
      setKeep(String(overview.settings?.retention_keep_last ?? ''));
      setWithin(String(overview.settings?.retention_keep_within_days ?? ''));
      setStorage(withStorage.storage ?? null);
    });
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(null);
    // An empty field falls back to its default; anything else goes as typed (the Station says what is wrong).
    const field = (text: string) => {
      const trimmed = text.trim();
      const value = Number(trimmed);
      return trimmed === '' ? undefined : Number.isFinite(value) ? value : trimmed;
    };
    const body = { retention_keep_last: field(keep), retention_keep_within_days: field(within) };
    const answer = await save.run(() => api.post<{ settings: StationSettings }>('/api/settings', body));
    if (answer) {
      setSaved(answer.settings);
      setKeep(String(answer.settings.retention_keep_last));
      setWithin(String(answer.settings.retention_keep_within_days));
    }
  }

  return (
    <>
      <Section title="Retention">
        <ErrorText error={load.error} />
        <form onSubmit={submit} noValidate>
          <Field
            label="Snapshots kept per job and instance"
            id="retention-keep-last"
            type="number"
            inputMode="numeric"
            value={keep}
            onInput={setKeep}
            disabled={!user.is_admin || load.busy}
            hint="retention_keep_last, 1 to 100000. After each upload the oldest snapshots of that job and instance beyond this number are deleted, oldest by the time each snapshot was taken (not when it arrived). Left empty, the default applies (RETENTION_KEEP_LAST, else 30)."
          />
          <Field
            label="Never delete snapshots younger than (days)"
            id="retention-keep-within-days"
            type="number"
            inputMode="numeric"
            value={within}
            onInput={setWithin}
            disabled={!user.is_admin || load.busy}
            hint="retention_keep_within_days, 0 to 36500; 0 is off. Snapshots taken within this many days are kept whatever the number above says, so a burst of uploads (a runaway or compromised Scout) cannot push out recent history. Older snapshots are then deleted down to the number above."
          />
          <ErrorText error={save.error} />
          {saved ? (
            <Notice>
              Saved. Each job keeps its newest {saved.retention_keep_last} snapshots per instance
              {saved.retention_keep_within_days > 0
                ? `, and every snapshot taken within the last ${saved.retention_keep_within_days} days`
                : ''}
              ; older ones go after its next upload.
            </Notice>
          ) : null}
          {user.is_admin ? (
            <div class="actions">
              <button type="submit" class="primary" disabled={save.busy || load.busy}>
                {save.busy ? 'Saving…' : 'Save settings'}
              </button>
            </div>
          ) : (
            <p class="muted">Only an admin can change settings.</p>
          )}
        </form>
      </Section>
      {storage ? (
        <Section title="Set at start-up">
          <p class="muted">
            These come from the environment of <code>backupd station serve</code>.
          </p>
          <dl class="facts">
            <dt>Upload limit (MAX_UPLOAD_BYTES)</dt>
            <dd>{formatBytes(storage.max_upload_bytes)} per archive</dd>
            <dt>Snapshot folder (BACKUP_ROOT)</dt>
            <dd>
              <code>{storage.backup_root ?? '—'}</code>
            </dd>
            <dt>Staging folder (STAGING_DIR)</dt>
            <dd>
              <code>{storage.staging_dir ?? '—'}</code>
            </dd>
          </dl>
        </Section>
      ) : null}
      <VerifyCard />
    </>
  );
}
