import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, useAction } from '../common/ui.tsx';
import { downloadKeyFile } from './key-file.ts';
import type { StatusPoll } from './status.ts';

/**
 * Until the Scout key has left this host (key_saved_at), Status says what is at stake and offers
 * the download: the key exists only here, and without a copy a lost host loses every snapshot.
 */
export function KeyBanner({ status }: { status: StatusPoll }) {
  const { user } = useSession();
  const action = useAction();
  const s = status.data;
  if (!s || s.key_saved_at) return null;
  return (
    <section class="key-banner" aria-label="Save the Scout key" data-testid="key-banner">
      <h2>Save the Scout key now</h2>
      <p>
        Every snapshot this Scout makes is encrypted with a key that exists only on this host. The Station
        never sees it.{' '}
        <strong>
          If this host or its data folder is lost before you keep a copy elsewhere, no snapshot can be
          restored
        </strong>{' '}
        — by you or anyone.
      </p>
      {user.is_admin ? (
        <>
          <div class="actions">
            <button
              type="button"
              class="primary"
              disabled={action.busy}
              onClick={async () => {
                if (await action.run(() => downloadKeyFile(s.scout_id))) await status.reload();
              }}
            >
              Download key file
            </button>
            <a href="/key" onClick={(event) => linkClick(event, '/key')}>
              Scout key page (or confirm a copy you keep)
            </a>
          </div>
          <p class="hint">Keep the file in a password manager or on another machine, not on this host.</p>
          <ErrorText error={action.error} />
        </>
      ) : (
        <p>Ask an admin of this Scout to download the key file (Scout key page).</p>
      )}
    </section>
  );
}
