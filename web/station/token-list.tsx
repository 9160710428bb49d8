/** Station tokens: hashes, bindings, expiry; revoke by hash or by bound instance. */
import { useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  StationTokensRevoked,
  StationTokenView,
  TokenBinding,
} from '../../src/shared/protocol/station-tokens.ts';
import { api } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { ageSeconds } from '../common/format.ts';
import { Notice, TableHead, Time } from '../common/ui.tsx';

const SOON_DAYS = 14;

type Open = { kind: 'hash'; token: StationTokenView } | { kind: 'instance'; binding: TokenBinding } | null;

const shortHash = (hash: string) => `${hash.slice(0, 12)}…`;

export function TokenList({
  tokens,
  onChanged,
}: {
  tokens: StationTokenView[];
  onChanged: () => Promise<void>;
}) {
  const [open, setOpen] = useState<Open>(null);
  const [done, setDone] = useState<string | null>(null);

  // Every token bound to an instance goes when that instance's token is revoked.
  const sharersOf = (b: TokenBinding) =>
    tokens.filter((t) =>
      t.registrations?.some((r) => r.scout_id === b.scout_id && r.scout_instance_id === b.scout_instance_id),
    );

  async function revoke(url: string, what: string) {
    setDone(null);
    const answer = await api.delete<StationTokensRevoked>(url);
    setDone(
      `Revoked ${what}: ${answer.revoked_rows} token${answer.revoked_rows === 1 ? '' : 's'}, ${answer.affected_instances} instance${answer.affected_instances === 1 ? '' : 's'} affected.`,
    );
    await onChanged();
  }

  return (
    <>
      {done ? <Notice>{done}</Notice> : null}
      {tokens.length === 0 ? (
        <p class="muted">No Station tokens. Mint one above for each host that runs a Scout.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack tokens">
            <TableHead columns={['Token hash', 'Kind', 'Created', 'Expires', 'Bound instances']} actions />
            <tbody>
              {tokens.map((t) => (
                <TokenRow
                  key={t.token_hash}
                  token={t}
                  onRevoke={() => setOpen({ kind: 'hash', token: t })}
                  onRevokeInstance={(binding) => setOpen({ kind: 'instance', binding })}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === 'hash' ? (
        <ConfirmDialog
          title="Revoke Station token"
          confirmLabel="Revoke token"
          onClose={() => setOpen(null)}
          onConfirm={() =>
            revoke(
              stationPaths.stationToken(open.token.token_hash),
              `token ${shortHash(open.token.token_hash)}`,
            )
          }
        >
          <p>
            Revoke the token <code>{open.token.token_hash}</code>? It stops working at once and cannot be
            restored.
          </p>
          <BoundList bindings={open.token.registrations ?? []} />
          <p>Snapshots already stored stay. Mint a new token for each Scout that should keep working.</p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'instance' ? (
        <ConfirmDialog
          title="Revoke the instance's token"
          confirmLabel="Revoke by instance"
          onClose={() => setOpen(null)}
          onConfirm={() =>
            revoke(
              stationPaths.stationTokensOfInstance(open.binding.scout_id, open.binding.scout_instance_id),
              `the tokens of ${open.binding.scout_id} / ${open.binding.scout_instance_id}`,
            )
          }
        >
          <p>
            Revoke every Station token bound to instance <code>{open.binding.scout_instance_id}</code> of
            Scout <strong>{open.binding.scout_id}</strong>?
          </p>
          {sharersOf(open.binding).map((t) => (
            <div key={t.token_hash}>
              <p>
                Token <code>{shortHash(t.token_hash)}</code> is revoked
                {t.shared ? '; it is shared, so it stops for all of its instances:' : '.'}
              </p>
              {t.shared ? <BoundList bindings={t.registrations ?? []} /> : null}
            </div>
          ))}
          <p>Snapshots already stored stay.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function BoundList({ bindings }: { bindings: TokenBinding[] }) {
  if (bindings.length === 0) return <p>No instance uses it yet.</p>;
  return (
    <>
      <p>These instances can no longer upload or recover with it:</p>
      <ul>
        {bindings.map((b) => (
          <li key={`${b.scout_id}/${b.scout_instance_id}`}>
            {b.scout_id} / <code>{b.scout_instance_id}</code>
          </li>
        ))}
      </ul>
    </>
  );
}

function TokenRow({
  token: t,
  onRevoke,
  onRevokeInstance,
}: {
  token: StationTokenView;
  onRevoke: () => void;
  onRevokeInstance: (binding: TokenBinding) => void;
}) {
  const left = -ageSeconds(t.expires_at) / 86400;
  const expired = t.expired === true || left <= 0;
  const bindings = t.registrations ?? [];
  return (
    <tr data-token-hash={t.token_hash}>
      <td data-label="Token hash">
        <code title={t.token_hash}>{shortHash(t.token_hash)}</code>
      </td>
      <td data-label="Kind">
        {t.shared ? `Shared (${bindings.length} of ${t.max_registrations})` : 'Normal'}
      </td>
      <td data-label="Created">
        <Time value={t.created_at} />
      </td>
      <td data-label="Expires">
        <Time value={t.expires_at} />{' '}
        {expired ? (
          <span class="badge bad">Expired</span>
        ) : left < SOON_DAYS ? (
          <span class="badge warn" title={`Fewer than ${SOON_DAYS} days left`}>
            Expires soon
          </span>
        ) : null}
      </td>
      <td class="notes" data-label="Bound instances">
        {bindings.length === 0 ? (
          <span class="muted">Not used yet</span>
        ) : (
          <ul class="bindings">
            {bindings.map((b) => (
              <li key={`${b.scout_id}/${b.scout_instance_id}`}>
                <span>
                  {b.scout_id} / <code>{b.scout_instance_id}</code>
                  {b.bound_at ? (
                    <>
                      {' '}
                      <small class="muted">
                        bound <Time value={b.bound_at} />
                      </small>
                    </>
                  ) : null}
                </span>{' '}
                <button
                  type="button"
                  class="small"
                  aria-label={`Revoke by instance ${b.scout_id} / ${b.scout_instance_id}`}
                  onClick={() => onRevokeInstance(b)}
                >
                  Revoke by instance
                </button>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td class="row-actions">
        <button
          type="button"
          class="danger-outline"
          aria-label={`Revoke token ${shortHash(t.token_hash)}`}
          onClick={onRevoke}
        >
          Revoke
        </button>
      </td>
    </tr>
  );
}
