import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../common/api.ts';
import { localTime } from '../common/format.ts';
import { useSession } from '../common/session.tsx';
import { Checkbox, ErrorText, Field, Notice, Section, Time, useAction } from '../common/ui.tsx';
import { useScoutStatus } from './status.ts';
import type { ScoutSettings } from './types.ts';

/**
 * The Scout's own part of Settings (admins only): the Station address, the Station token (`scout_credential`, never shown
 * back), the Scout ID, the cron schedule and the drill schedule. POST /api/settings replaces
 * every saved value, so the form always sends all of them; an empty token field keeps the saved
 * token.
 */
export function ScoutSettingsSection() {
  const { user } = useSession();
  if (!user.is_admin) return null;
  return <ScoutSettingsForm />;
}

function ScoutSettingsForm() {
  const status = useScoutStatus();
  const [saved, setSaved] = useState<ScoutSettings | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [stationUrl, setStationUrl] = useState('');
  const [credential, setCredential] = useState('');
  const [removeCredential, setRemoveCredential] = useState(false);
  const [scoutId, setScoutId] = useState('');
  const [cron, setCron] = useState('');
  const [drillCron, setDrillCron] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();

  function show(settings: ScoutSettings) {
    setSaved(settings);
    setStationUrl(settings.station_url ?? '');
    setScoutId(settings.scout_id);
    setCron(settings.cron_schedule);
    setDrillCron(settings.drill_schedule ?? '');
    setCredential('');
    setRemoveCredential(false);
  }

  useEffect(() => {
    api
      .get<{ settings: ScoutSettings }>('/api/settings')
      .then((reply) => show(reply.settings))
      .catch((error: unknown) => setLoadError(errorText(error)));
  }, []);

  if (!saved) {
    return (
      <Section title="Station and schedule">
        {loadError ? <ErrorText error={loadError} /> : <p aria-busy="true">Loading…</p>}
      </Section>
    );
  }
  const hasCredential = Boolean(saved.scout_credential);
  const next = status.data?.scheduler.next_run_at ?? null;

  return (
    <>
      <Section title="Station and schedule">
        <form
          aria-label="Scout settings"
          onSubmit={async (event) => {
            event.preventDefault();
            setDone(false);
            const token = credential.trim();
            const reply = await action.run(() =>
              api.post<{ settings: ScoutSettings }>('/api/settings', {
                station_url: stationUrl.trim() || null,
                scout_credential: token || (removeCredential ? null : saved.scout_credential),
                scout_id: scoutId.trim(),
                cron_schedule: cron.trim(),
                drill_schedule: drillCron.trim(),
              }),
            );
            if (!reply) return;
            show(reply.settings);
            setDone(true);
            await status.reload();
          }}
        >
          <Field
            label="Station URL"
            type="url"
            value={stationUrl}
            onInput={setStationUrl}
            placeholder="https://station.example.net:6555"
            autoComplete="url"
            spellcheck={false}
            hint="Where the Station listens, as this Scout reaches it."
          />
          <Field
            label="Scout credential"
            type="password"
            value={credential}
            onInput={setCredential}
            autoComplete="off"
            spellcheck={false}
            placeholder={hasCredential ? '•••••••• (saved, not shown)' : 'paste the Station token'}
            hint={
              <span data-testid="credential-state">
                {hasCredential
                  ? 'A Station token is saved (not shown). Leave this empty to keep it, or paste a new one to replace it.'
                  : 'No Station token is saved. Mint one on the Station (Tokens) and paste it here.'}
              </span>
            }
          />
          {hasCredential ? (
            <Checkbox
              label="Remove the saved Station token"
              checked={removeCredential}
              onChange={setRemoveCredential}
            />
          ) : null}
          <Field
            label="Scout ID"
            value={scoutId}
            onInput={setScoutId}
            spellcheck={false}
            autoComplete="off"
            hint="The name this Scout's snapshots are filed under on the Station. Changing it starts a new namespace there."
          />
          <Field
            label="Cron schedule"
            value={cron}
            onInput={setCron}
            spellcheck={false}
            autoComplete="off"
            hint={
              <>
                When backup cycles run, as a cron expression in the Scout's time zone: <code>0 * * * *</code>{' '}
                is hourly, <code>30 2 * * *</code> daily at 02:30.
              </>
            }
          />
          <p data-testid="next-run">
            Next cycle:{' '}
            {next ? (
              <>
                {localTime(next)} (<Time value={next} />)
              </>
            ) : (
              '—'
            )}
            {status.data && status.data.scheduler.cron_schedule !== cron.trim() ? (
              <span class="muted"> — for the saved schedule; save to apply the new one</span>
            ) : null}
          </p>
          <Field
            label="Drill schedule"
            value={drillCron}
            onInput={setDrillCron}
            spellcheck={false}
            autoComplete="off"
            placeholder="empty: never"
            hint={
              <>
                When restore drills run (each job's newest snapshot is read back from the Station to prove it
                restores), as a cron expression: <code>0 4 * * 0</code> is Sundays at 04:00, the default.
                Leave it empty to turn scheduled drills off. A job is flagged when no drill passed within
                twice this period.
              </>
            }
          />
          <p class="hint">
            Saving stores every value above, so values that came from environment variables are pinned.
          </p>
          <ErrorText error={action.error} />
          {done ? <Notice>Saved.</Notice> : null}
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy}>
              Save Scout settings
            </button>
          </div>
        </form>
      </Section>
    </>
  );
}
