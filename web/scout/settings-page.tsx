import { useEffect, useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { StationContactView } from '../../src/shared/protocol/scout-status.ts';
import type { ScoutSettingsView, SettingsReply } from '../../src/shared/protocol/settings.ts';
import { api, errorText } from '../common/api.ts';
import { describeCron } from '../common/cron.ts';
import { localTime } from '../common/format.ts';
import { useSession } from '../common/session.tsx';
import { Checkbox, ErrorText, Field, Notice, Section, Time, useAction } from '../common/ui.tsx';
import { useScoutStatus } from './status.ts';

interface Outcome {
  tone: 'ok' | 'bad';
  text: string;
}

/** What saving the Station settings found when the Scout asked the Station. */
function contactResult(contact: StationContactView): Outcome {
  if (!contact.reachable)
    return {
      tone: 'bad',
      text: `Saved, but the Station cannot be reached at this address: ${contact.detail ?? 'no answer'}. Check the URL and port.`,
    };
  if (contact.code === null || contact.code === 'not_bound')
    return { tone: 'ok', text: 'Saved. The Station answered and accepted the token.' };
  if (contact.code === 'token_rejected')
    return {
      tone: 'bad',
      text: `Saved, but the Station refused the token: ${contact.detail ?? 'mint a new one'}.`,
    };
  return {
    tone: 'bad',
    text: `Saved, but the Station answered with a problem: ${contact.detail ?? contact.code}.`,
  };
}

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
  const [saved, setSaved] = useState<ScoutSettingsView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [stationUrl, setStationUrl] = useState('');
  const [credential, setCredential] = useState('');
  const [removeCredential, setRemoveCredential] = useState(false);
  const [scoutId, setScoutId] = useState('');
  const [cron, setCron] = useState('');
  const [drillCron, setDrillCron] = useState('');
  const [freshDays, setFreshDays] = useState('7');
  const [done, setDone] = useState<Outcome | null>(null);
  const [checking, setChecking] = useState(false);
  const action = useAction();

  function show(settings: ScoutSettingsView) {
    setSaved(settings);
    setStationUrl(settings.station_url ?? '');
    setScoutId(settings.scout_id);
    setCron(settings.cron_schedule);
    setDrillCron(settings.drill_schedule ?? '');
    setFreshDays(String(settings.force_send_every_days ?? 7));
    setCredential('');
    setRemoveCredential(false);
  }

  useEffect(() => {
    api
      .get<SettingsReply<ScoutSettingsView>>(scoutPaths.settings)
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
        <dl class="facts">
          <dt>Scan root</dt>
          <dd>
            <code data-testid="settings-scan-root">{status.data?.scan_root ?? '…'}</code>
            <small class="hint">
              {' '}
              The folder whose sub-folders are backed up. It is set when the Scout starts (
              <code>SCAN_ROOT</code>
              ), not here.
            </small>
          </dd>
        </dl>
        <form
          aria-label="Scout settings"
          onSubmit={async (event) => {
            event.preventDefault();
            setDone(null);
            const token = credential.trim();
            const reply = await action.run(() =>
              api.post<SettingsReply<ScoutSettingsView>>(scoutPaths.settings, {
                station_url: stationUrl.trim() || null,
                scout_credential: token || (removeCredential ? null : saved.scout_credential),
                scout_id: scoutId.trim(),
                cron_schedule: cron.trim(),
                drill_schedule: drillCron.trim(),
                force_send_every_days: freshDays.trim() === '' ? 7 : Number(freshDays.trim()),
              }),
            );
            if (!reply) return;
            show(reply.settings);
            setDone(null);
            // Saying "Saved." is not enough for a Station address: ask the Station now.
            if (reply.settings.station_url && reply.settings.scout_credential) {
              setChecking(true);
              const contact = await api
                .post<StationContactView>(scoutPaths.stationCheck)
                .catch(() => null)
                .finally(() => setChecking(false));
              setDone(
                contact ? contactResult(contact) : { tone: 'bad', text: 'Saved, but the check failed.' },
              );
            } else {
              setDone({ tone: 'ok', text: 'Saved. No Station is set yet, so nothing is uploaded.' });
            }
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
            label="Station token"
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
                  : 'No Station token is saved. Mint one on the Station\'s "Station tokens" page and paste it here.'}
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
            label="Backup schedule (cron)"
            value={cron}
            onInput={setCron}
            spellcheck={false}
            autoComplete="off"
            hint={
              <>
                When backups run, as a cron expression in the Scout's time zone:{' '}
                {describeCron(cron) ? (
                  <strong data-testid="cron-words">{describeCron(cron)}</strong>
                ) : (
                  <>
                    <code>0 * * * *</code> is hourly, <code>30 2 * * *</code> daily at 02:30
                  </>
                )}
                .
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
            label="Fresh snapshot every (days)"
            type="number"
            min={0}
            step={1}
            value={freshDays}
            onInput={setFreshDays}
            hint={
              <>
                A job whose newest snapshot is this many days old gets a fresh one at its next backup, even
                when its names and sizes did not change (edits that keep a file's size are caught this way).
                0: never. <span class="api-name">force_send_every_days</span>
              </>
            }
          />
          <Field
            label="Drill schedule (cron)"
            value={drillCron}
            onInput={setDrillCron}
            spellcheck={false}
            autoComplete="off"
            placeholder="empty: never"
            hint={
              <>
                When restore drills run (each job's newest snapshot is read back from the Station to prove it
                restores), as a cron expression
                {describeCron(drillCron) ? <strong> ({describeCron(drillCron)})</strong> : null}:{' '}
                <code>0 4 * * 0</code> is Sundays at 04:00, the default. Leave it empty to turn scheduled
                drills off. A job is flagged when no drill passed within twice this period.
              </>
            }
          />
          <p class="hint">
            Saving stores every value above, so values that came from environment variables are pinned.
          </p>
          <ErrorText error={action.error} />
          {checking ? <Notice>Saved. Testing the connection to the Station…</Notice> : null}
          {done ? (
            <p class={done.tone === 'ok' ? 'notice' : 'error'} role="status" data-testid="save-outcome">
              {done.text}
            </p>
          ) : null}
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
