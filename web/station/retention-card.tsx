/** Settings → Retention: the policy's rules, each explained, and a preview of what it deletes. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { Overview } from '../../src/shared/protocol/overview.ts';
import type { SettingsReply, StationSettingsView } from '../../src/shared/protocol/settings.ts';
import { api } from '../common/api.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Field, Notice, Section, useAction } from '../common/ui.tsx';
import { RetentionPreview, useRetentionPreview } from './retention-preview.tsx';
import { RETENTION_RULES } from './retention-rules.ts';

type Values = Record<string, string>;

/** An empty field falls back to its default; anything else goes as typed (the Station says what is wrong). */
function bodyOf(values: Values): Record<string, number | string | undefined> {
  return Object.fromEntries(
    RETENTION_RULES.map(({ field }) => {
      const trimmed = (values[field] ?? '').trim();
      const value = Number(trimmed);
      return [field, trimmed === '' ? undefined : Number.isFinite(value) ? value : trimmed];
    }),
  );
}

const valuesOf = (settings: StationSettingsView | undefined): Values =>
  Object.fromEntries(RETENTION_RULES.map(({ field }) => [field, String(settings?.[field] ?? '')]));

export function RetentionCard() {
  const { user } = useSession();
  const [values, setValues] = useState<Values>({});
  const [saved, setSaved] = useState<StationSettingsView | null>(null);
  const load = useAction();
  const save = useAction();
  const check = useAction();

  useEffect(() => {
    void load.run(async () => {
      const overview = await api.get<Overview>(stationPaths.overview('settings'));
      setValues(valuesOf(overview.settings));
    });
  }, []);

  // The preview follows the fields as they are typed (admins only: it lists every job).
  const preview = useRetentionPreview(
    values,
    () => (user.is_admin && Object.keys(values).length > 0 ? bodyOf(values) : null),
    check,
  );

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(null);
    const answer = await save.run(() =>
      api.post<SettingsReply<StationSettingsView>>(stationPaths.settings, bodyOf(values)),
    );
    if (answer) {
      setSaved(answer.settings);
      setValues(valuesOf(answer.settings));
    }
  }

  return (
    <Section title="Retention">
      <ErrorText error={load.error} />
      <p class="muted">
        After each upload, the Station deletes the job's snapshots that no rule keeps; a snapshot is kept when
        any rule keeps it, and a protected snapshot is never deleted. Days, weeks, months, years and "younger
        than" count by the time the Station stored each snapshot (UTC), which no Scout can choose; the list
        still shows snapshots by the time each was taken. Uploads stored on one day count as one (the first)
        when deciding what stored before that day is kept, so a flood of uploads cannot push out history.
      </p>
      <form onSubmit={submit} noValidate class="retention-form">
        {RETENTION_RULES.map((rule) => (
          <Field
            key={rule.field}
            label={rule.label}
            id={rule.id}
            type="number"
            inputMode="numeric"
            value={values[rule.field] ?? ''}
            onInput={(text) => setValues({ ...values, [rule.field]: text })}
            disabled={!user.is_admin || load.busy}
            hint={rule.hint}
          />
        ))}
        <ErrorText error={save.error ?? check.error} />
        {saved ? (
          <Notice>
            Saved. Each job keeps its newest {saved.retention_keep_last} snapshots per instance
            {saved.retention_keep_within_days > 0
              ? `, and every snapshot stored within the last ${saved.retention_keep_within_days} days`
              : ''}
            , with the calendar rules above; the rest go after its next upload.
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
      {preview ? <RetentionPreview preview={preview} /> : null}
    </Section>
  );
}
