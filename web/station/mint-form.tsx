/** Minting a Station token: normal (one instance) or shared (up to max_registrations), with a TTL. */
import { useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { MintedStationToken } from '../../src/shared/protocol/station-tokens.ts';
import { api } from '../common/api.ts';
import { Checkbox, CopyButton, ErrorText, Field, Notice, SecretOnce, useAction } from '../common/ui.tsx';

/** A number field's text as JSON: blank is omitted, anything else goes to the server to judge. */
function numberOrText(text: string): number | string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

/** The lines a host's environment needs for `backupd scout serve` to reach this Station. */
export function envLines(credential: string, origin = location.origin): string {
  return `STATION_URL=${origin}\nSCOUT_CREDENTIAL=${credential}`;
}

export function MintForm({ onMinted }: { onMinted: () => void }) {
  const [ttl, setTtl] = useState('365');
  const [shared, setShared] = useState(false);
  const [max, setMax] = useState('10');
  const [minted, setMinted] = useState<MintedStationToken | null>(null);
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    setMinted(null);
    const body: Record<string, unknown> = { shared };
    const ttlDays = numberOrText(ttl);
    if (ttlDays !== undefined) body.ttl_days = ttlDays;
    if (shared) {
      const maxRegistrations = numberOrText(max);
      if (maxRegistrations !== undefined) body.max_registrations = maxRegistrations;
    }
    const answer = await action.run(() => api.post<MintedStationToken>(stationPaths.mintStationToken, body));
    if (answer) {
      setMinted(answer);
      onMinted();
    }
  }

  return (
    <section class="card" aria-labelledby="mint-title">
      <h2 id="mint-title">Mint a Station token</h2>
      <p class="muted">
        A Scout uploads and recovers snapshots with a Station token. A normal token binds to the first
        instance that uses it; a shared one to up to the chosen number of instances.
      </p>
      <form onSubmit={submit} noValidate class="mint-form">
        <Field
          label="Valid for (days)"
          id="mint-ttl"
          type="number"
          inputMode="numeric"
          value={ttl}
          onInput={setTtl}
          hint="1 to 3650 days; 365 when left empty."
        />
        <Checkbox label="Shared by several Scout instances" checked={shared} onChange={setShared} />
        {shared ? (
          <Field
            label="Maximum registrations"
            id="mint-max"
            type="number"
            inputMode="numeric"
            value={max}
            onInput={setMax}
            hint="How many instances may bind to it: 2 to 10000."
          />
        ) : null}
        <ErrorText error={action.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>
            {action.busy ? 'Minting…' : 'Mint token'}
          </button>
        </div>
      </form>
      {minted ? <MintedToken minted={minted} onDone={() => setMinted(null)} /> : null}
    </section>
  );
}

function MintedToken({ minted, onDone }: { minted: MintedStationToken; onDone: () => void }) {
  const lines = envLines(minted.credential);
  return (
    <div class="minted" data-testid="minted">
      <Notice>
        {minted.message} Valid for {minted.ttl_days} days.
      </Notice>
      <SecretOnce label="Station token" secret={minted.credential} />
      <h3 id="env-title">Environment for the host</h3>
      <p>
        Paste these lines into the environment of <code>backupd scout serve</code> on the host (an environment
        file, the systemd unit, or the container's environment):
      </p>
      <pre class="env-lines" data-testid="env-lines">
        {lines}
      </pre>
      <p class="key-step" data-testid="key-step">
        Then, in the Scout's own web UI (port 6556), <strong>download its Scout key</strong> (Status shows a
        banner until you do): snapshots are encrypted to it and cannot be restored without a copy of it if
        that host is lost. The Station never sees the key.
      </p>
      <div class="actions">
        <CopyButton text={lines} label="Copy environment lines" />
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}
