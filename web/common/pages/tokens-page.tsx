import { useState } from 'preact/hooks';
import type {
  AutomationTokenList,
  AutomationTokenView,
  CreatedAutomationToken,
} from '../../../src/shared/protocol/accounts.ts';
import { accountPaths } from '../../../src/shared/protocol/api-paths.ts';
import { api } from '../api.ts';
import { ConfirmDialog } from '../dialog.tsx';
import { localTime } from '../format.ts';
import { usePoll } from '../poll.ts';
import { ErrorText, Field, SecretOnce, Section, TableHead, Time, useAction } from '../ui.tsx';

const SCOPES = [
  { name: 'read', text: 'status, overview and verification results; no settings or secrets' },
  { name: 'backup', text: 'start, cancel, pause and resume backups and uploads' },
  { name: 'restore', text: 'download snapshots and start or answer restores (can replace files)' },
  {
    name: 'manage',
    text: 'every other management call and secret (settings, hooks, certificates, notifications, deletion); never accounts, sessions or automation tokens',
  },
];

/** A scope one app adds (the Station's `replicate`). */
export interface ExtraScope {
  name: string;
  text: string;
}

/** Automation tokens of the signed-in admin: create (secret shown once), list, revoke. */
export function TokensPage({ extraScopes = [] }: { extraScopes?: ExtraScope[] }) {
  const tokens = usePoll(() => api.get<AutomationTokenList>(accountPaths.automationTokens), null);
  const [revoking, setRevoking] = useState<AutomationTokenView | null>(null);
  const list = tokens.data?.tokens ?? [];
  return (
    <>
      <h1>Automation tokens</h1>
      <p class="muted">
        For scripts and integrations: send one as <code>Authorization: Bearer &lt;token&gt;</code>. A token
        acts for you with only its scopes, and stops working when it expires, is revoked, or you lose admin
        access.
      </p>
      <CreateToken scopes={[...SCOPES, ...extraScopes]} onCreated={() => void tokens.reload()} />
      <Section title="Your tokens">
        <ErrorText error={tokens.error} />
        {tokens.data && list.length === 0 ? <p class="muted">No automation tokens yet.</p> : null}
        {list.length > 0 ? (
          <div class="table-wrap">
            <table>
              <TableHead columns={['Name', 'Scopes', 'Expires', 'Last used', 'Actions']} />
              <tbody>
                {list.map((token) => (
                  <tr key={token.id}>
                    <td>
                      <strong>{token.name}</strong>
                      <div class="muted small">
                        created <Time value={token.created_at} />
                      </div>
                    </td>
                    <td>
                      <span class="badges">
                        {token.scopes.map((scope) => (
                          <span key={scope} class="badge">
                            {scope}
                          </span>
                        ))}
                      </span>
                    </td>
                    <td>
                      {token.expired ? <span class="badge bad">Expired</span> : null}{' '}
                      <Time value={token.expires_at} />
                      <div class="muted small">{localTime(token.expires_at)}</div>
                    </td>
                    <td>
                      {token.last_used_at ? (
                        <Time value={token.last_used_at} />
                      ) : (
                        <span class="muted">never</span>
                      )}
                    </td>
                    <td>
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Revoke ${token.name}`}
                        onClick={() => setRevoking(token)}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </Section>
      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          confirmLabel="Revoke token"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await api.delete(accountPaths.automationToken(revoking.id));
            await tokens.reload();
          }}
        >
          <p>
            The token <strong>{revoking.name}</strong> ({revoking.scopes.join(', ')}) stops working at once:
            every script or integration that uses it gets “401 Unauthorized” from its next request. This
            cannot be undone; to give access again, create a new token.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function CreateToken({ scopes: choices, onCreated }: { scopes: ExtraScope[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [ttl, setTtl] = useState('90');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const action = useAction();
  return (
    <Section title="Create a token">
      <form
        aria-label="Create an automation token"
        onSubmit={async (event) => {
          event.preventDefault();
          setCreated(null);
          const body: { name: string; scopes: string[]; ttl_days?: number } = {
            name,
            scopes: choices.map((s) => s.name).filter((s) => scopes.includes(s)),
          };
          if (ttl.trim() !== '') body.ttl_days = Number(ttl);
          const reply = await action.run(() =>
            api.post<CreatedAutomationToken>(accountPaths.automationTokens, body),
          );
          if (!reply) return;
          setCreated({ name: reply.automation_token.name, token: reply.token });
          setName('');
          setScopes([]);
          setTtl('90');
          onCreated();
        }}
      >
        <div class="grid">
          <Field
            id="token-name"
            label="Name"
            value={name}
            onInput={setName}
            hint="What uses it, e.g. “home-assistant”."
            maxLength={100}
            required
          />
          <Field
            id="token-ttl"
            label="Expires after (days)"
            type="number"
            min={1}
            max={3650}
            step={1}
            value={ttl}
            onInput={setTtl}
            hint="1 to 3650; 90 when empty."
          />
        </div>
        <fieldset class="choices">
          <legend>Scopes</legend>
          {choices.map((scope) => (
            <label key={scope.name} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope.name)}
                onChange={(event) => {
                  const on = (event.target as HTMLInputElement).checked;
                  setScopes((prev) => (on ? [...prev, scope.name] : prev.filter((s) => s !== scope.name)));
                }}
              />
              <span>
                <strong>{scope.name}</strong> <span class="muted">— {scope.text}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <ErrorText error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create token
        </button>
      </form>
      {created ? (
        <div class="token-created">
          <SecretOnce label={`Token “${created.name}”`} secret={created.token} />
          <button type="button" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      ) : null}
    </Section>
  );
}
