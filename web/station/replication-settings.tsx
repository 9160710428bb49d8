/** Settings → Off-site copy: where this Station (as a replica) pulls from, when, and how fast. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { Overview } from '../../src/shared/protocol/overview.ts';
import type { ReplicationSettingsView } from '../../src/shared/protocol/replication.ts';
import type { SettingsReply, StationSettingsView } from '../../src/shared/protocol/settings.ts';
import { api } from '../common/api.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Field, Notice, Section, useAction } from '../common/ui.tsx';

export function ReplicationSettingsSection() {
  const { user } = useSession();
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [tokenSet, setTokenSet] = useState(false);
  const [schedule, setSchedule] = useState('');
  const [rate, setRate] = useState('');
  const [lag, setLag] = useState('');
  const [saved, setSaved] = useState(false);
  const load = useAction();
  const save = useAction();

  const show = (s: ReplicationSettingsView) => {
    setUrl(s.replication_source_url);
    setTokenSet(s.replication_token_set);
    setSchedule(s.replication_schedule);
    setRate(String(s.replication_bytes_per_second));
    setLag(String(s.replication_max_lag_hours));
  };

  useEffect(() => {
    void load.run(async () => {
      const overview = await api.get<Overview>(stationPaths.overview('settings'));
      if (overview.settings) show(overview.settings);
    });
  }, []);

  async function submit(body: Record<string, unknown>) {
    setSaved(false);
    const answer = await save.run(() =>
      api.post<SettingsReply<StationSettingsView>>(stationPaths.settings, body),
    );
    if (answer) {
      show(answer.settings);
      setToken('');
      setSaved(true);
    }
  }

  const number = (text: string) => (text.trim() === '' ? undefined : Number(text.trim()));
  const disabled = !user.is_admin || load.busy;
  return (
    <Section title="Off-site copy">
      <p class="muted">
        This Station can keep a copy of every snapshot of another Station (the primary): it pulls them with an
        automation token of the primary that has only the <code>replicate</code> scope, checks each SHA-256
        and keeps them under its own retention. Leave the address empty on a Station that is not a replica.
      </p>
      <ErrorText error={load.error} />
      <form
        aria-label="Off-site copy settings"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit({
            replication_source_url: url.trim(),
            ...(token.trim() !== '' ? { replication_token: token.trim() } : {}),
            replication_schedule: schedule.trim(),
            replication_bytes_per_second: number(rate),
            replication_max_lag_hours: number(lag),
          });
        }}
      >
        <Field
          label="Primary Station address"
          id="replication-source-url"
          value={url}
          onInput={setUrl}
          disabled={disabled}
          placeholder="https://primary.example:6555"
          hint="replication_source_url: the primary's address as this Station reaches it."
        />
        <Field
          label="Replication token"
          id="replication-token"
          type="password"
          autoComplete="off"
          value={token}
          onInput={setToken}
          disabled={disabled}
          placeholder={tokenSet ? 'set (leave empty to keep it)' : 'bkd_at_…'}
          hint="replication_token: an automation token of the primary with the replicate scope. It is kept in this Station's database and never shown again."
        />
        <Field
          label="Schedule (cron)"
          id="replication-schedule"
          value={schedule}
          onInput={setSchedule}
          disabled={disabled}
          hint='replication_schedule: when to copy, e.g. "0 * * * *" (hourly, the default); empty copies only on "Copy now".'
        />
        <Field
          label="Bandwidth limit (bytes per second)"
          id="replication-bytes-per-second"
          type="number"
          inputMode="numeric"
          value={rate}
          onInput={setRate}
          disabled={disabled}
          hint="replication_bytes_per_second: 0 is unlimited; 1250000 is about 10 Mbit/s."
        />
        <Field
          label="Alert when a job is behind by more than (hours)"
          id="replication-max-lag-hours"
          type="number"
          inputMode="numeric"
          value={lag}
          onInput={setLag}
          disabled={disabled}
          hint="replication_max_lag_hours: a notification when a job's newest copy here is older than the primary's newest by more than this; 0 is off."
        />
        <ErrorText error={save.error} />
        {saved ? <Notice>Saved.</Notice> : null}
        {user.is_admin ? (
          <div class="actions">
            <button type="submit" class="primary" disabled={save.busy || load.busy}>
              {save.busy ? 'Saving…' : 'Save off-site copy'}
            </button>
            {tokenSet ? (
              <button
                type="button"
                disabled={save.busy}
                onClick={() => void submit({ replication_token: '' })}
              >
                Remove token
              </button>
            ) : null}
          </div>
        ) : null}
      </form>
    </Section>
  );
}
