import { useEffect, useState } from 'preact/hooks';
import { integrationPaths } from '../../../src/shared/protocol/api-paths.ts';
import type {
  NtfyReply,
  NtfySettingsView,
  NtfyTestReply,
} from '../../../src/shared/protocol/integrations.ts';
import type { SettingsReply } from '../../../src/shared/protocol/settings.ts';
import { api } from '../api.ts';
import { usePoll } from '../poll.ts';
import { ErrorText, Field, Notice, Section, useAction } from '../ui.tsx';
import { AdminOnlyNote, TextArea } from './fields.tsx';

/** The Station's filters; a Scout's settings have none of these fields. */
const FILTERS = [
  {
    key: 'ntfy_match_scout_id',
    label: 'Only for Scout IDs',
    hint: 'Comma-separated; empty sends for every Scout.',
  },
  {
    key: 'ntfy_match_scout_instance_id',
    label: 'Only for Scout instance IDs',
    hint: 'Comma-separated; empty sends for every instance.',
  },
  {
    key: 'ntfy_match_source',
    label: 'Only for sources',
    hint: 'Comma-separated of upload, verify, restore_request; empty sends for all.',
  },
];

/** ntfy push notifications: server, topic, message template (and the Station's filters), test send. */
export function NotificationsSection({ isAdmin }: { isAdmin: boolean }) {
  const loaded = usePoll(() => api.get<NtfyReply>(integrationPaths.ntfy), null);
  const [form, setForm] = useState<NtfySettingsView | null>(null);
  const [saved, setSaved] = useState(false);
  const [outcome, setOutcome] = useState<NtfyTestReply | null>(null);
  const save = useAction();
  const test = useAction();
  useEffect(() => {
    if (loaded.data && form === null) setForm({ ...loaded.data.settings });
  }, [loaded.data]);

  const filters = FILTERS.filter((f) => form && f.key in form);
  const set = (key: string) => (value: string) => {
    setSaved(false);
    setOutcome(null);
    setForm((prev) => ({ ...prev, [key]: value }));
  };

  return (
    <Section title="Notifications">
      <p class="muted">
        Push notifications through an <a href="https://ntfy.sh">ntfy</a> server (ntfy.sh or your own) when
        something needs attention. Leave the server or topic empty to send none.
      </p>
      {isAdmin ? null : <AdminOnlyNote what="notification settings" />}
      <ErrorText error={loaded.error} />
      {form ? (
        <form
          aria-label="Notification settings"
          onSubmit={async (event) => {
            event.preventDefault();
            setSaved(false);
            setOutcome(null);
            const reply = await save.run(() =>
              api.post<SettingsReply<NtfySettingsView>>(integrationPaths.ntfy, form),
            );
            if (!reply) return;
            setForm({ ...reply.settings });
            setSaved(true);
          }}
        >
          <fieldset class="plain" disabled={!isAdmin}>
            <legend class="visually-hidden">ntfy</legend>
            <div class="grid">
              <Field
                id="ntfy-url"
                label="ntfy server URL"
                inputMode="url"
                value={form.ntfy_url ?? ''}
                onInput={set('ntfy_url')}
                placeholder="https://ntfy.sh"
                hint="An http:// or https:// address."
              />
              <Field
                id="ntfy-topic"
                label="Topic"
                value={form.ntfy_topic ?? ''}
                onInput={set('ntfy_topic')}
                autoComplete="off"
                hint="Up to 64 letters, digits, “_” or “-”. Anyone who knows it can read the messages: pick one hard to guess."
              />
            </div>
            <TextArea
              id="ntfy-template"
              label="Message template"
              value={form.ntfy_message_template ?? ''}
              onInput={set('ntfy_message_template')}
              placeholder={loaded.data?.default_template}
              rows={3}
              hint={
                <>
                  Empty uses the default, <code>{loaded.data?.default_template}</code>. Placeholders such as{' '}
                  <code>{'{{summary}}'}</code>, <code>{'{{event}}'}</code>, <code>{'{{scout_id}}'}</code>,{' '}
                  <code>{'{{job_name}}'}</code> are filled in.
                </>
              }
            />
            {filters.length > 0 ? (
              <div class="grid">
                {filters.map((f) => (
                  <Field
                    key={f.key}
                    id={`ntfy-${f.key}`}
                    label={f.label}
                    value={form[f.key] ?? ''}
                    onInput={set(f.key)}
                    autoComplete="off"
                    hint={f.hint}
                  />
                ))}
              </div>
            ) : null}
            <ErrorText error={save.error} />
            {saved ? <Notice>Notification settings saved.</Notice> : null}
            <div class="actions">
              <button type="submit" class="primary" disabled={save.busy}>
                Save notification settings
              </button>
              <button
                type="button"
                disabled={test.busy}
                onClick={async () => {
                  setOutcome(null);
                  const reply = await test.run(() =>
                    api.post<NtfyTestReply>(integrationPaths.ntfyTest, form),
                  );
                  if (reply) setOutcome(reply);
                }}
              >
                {test.busy ? 'Sending…' : 'Send a test notification'}
              </button>
              <span class="muted small">The test uses the values above, saved or not.</span>
            </div>
            <ErrorText error={test.error} />
            {outcome?.status === 'sent' ? (
              <Notice>Test notification sent: ntfy answered {outcome.http_status ?? 'OK'}.</Notice>
            ) : null}
            {outcome && outcome.status !== 'sent' ? (
              <ErrorText error={`Test notification not sent: ${outcome.detail}`} />
            ) : null}
          </fieldset>
        </form>
      ) : null}
    </Section>
  );
}
