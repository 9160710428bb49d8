/** `/`: Scouts → instances → jobs → snapshots with their health, and the Station's storage. */
import { useState } from 'preact/hooks';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Time } from '../common/ui.tsx';
import { MISSING_RULE, STALE_RULE, UNUSUAL_RULE } from './health.ts';
import { InstanceDeleteDialog } from './instance-delete.tsx';
import { JobCard } from './job-card.tsx';
import { RecoveryTokenDialog } from './recovery-token-dialog.tsx';
import type { InstanceRef } from './restore-dialog.tsx';
import { StorageCard } from './storage-card.tsx';
import type { Instance, Overview, Scout } from './types.ts';

export const REFRESH_MS = 15_000;

const byText =
  <T,>(key: (item: T) => string) =>
  (a: T, b: T) =>
    key(a).localeCompare(key(b));

/** Scouts, their instances and their jobs in name order (the API keeps insertion order). */
function sorted(scouts: Scout[]): Scout[] {
  return [...scouts].sort(byText((s) => s.scout_id)).map((scout) => ({
    ...scout,
    instances: [...scout.instances].sort(byText((i) => i.scout_instance_id)).map((instance) => ({
      ...instance,
      jobs: [...instance.jobs].sort(byText((j) => j.job_name)),
    })),
  }));
}

export function OverviewPage() {
  const { user } = useSession();
  const poll = usePoll(() => api.get<Overview>('/api/overview'), REFRESH_MS);
  const scouts = sorted(poll.data?.scouts ?? []);
  const targets: InstanceRef[] = scouts.flatMap((scout) =>
    scout.instances.map((i) => ({ scoutId: scout.scout_id, instanceId: i.scout_instance_id })),
  );

  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <p class="muted" aria-live="polite">
          {poll.loadedAt ? (
            <>
              Updated <Time value={poll.loadedAt} />; refreshes every {REFRESH_MS / 1000} s.
            </>
          ) : poll.loading ? (
            'Loading…'
          ) : null}
        </p>
        <button type="button" onClick={() => void poll.reload()} disabled={poll.loading}>
          Refresh now
        </button>
      </div>
      <ErrorText error={poll.error} />
      {poll.data?.storage ? (
        <StorageCard storage={poll.data.storage} isAdmin={user.is_admin} onChanged={poll.reload} />
      ) : null}
      {poll.data && scouts.length === 0 ? (
        <section class="card">
          <h2>No snapshots yet</h2>
          <p>
            No Scout has uploaded a snapshot.{' '}
            {user.is_admin ? (
              <>
                <a href="/station-tokens" onClick={(event) => linkClick(event, '/station-tokens')}>
                  Mint a Station token
                </a>{' '}
                and start <code>backupd scout serve</code> with it on a host.
              </>
            ) : (
              'An admin mints a Station token for each host that runs a Scout.'
            )}
          </p>
        </section>
      ) : null}
      {scouts.length > 0 ? <Legend /> : null}
      {scouts.map((scout) => (
        <ScoutCard
          key={scout.scout_id}
          scout={scout}
          isAdmin={user.is_admin}
          targets={targets}
          onChanged={() => void poll.reload()}
        />
      ))}
    </>
  );
}

function Legend() {
  return (
    <details class="legend card">
      <summary>What the flags mean</summary>
      <ul>
        <li>
          <span class="badge warn">Stale</span> {STALE_RULE}
        </li>
        <li>
          <span class="badge warn">Unusual</span> {UNUSUAL_RULE.replace(/^Unusual: /, '')}
        </li>
        <li>
          <span class="badge bad">File missing</span> {MISSING_RULE.replace(/^Missing: /, '')}
        </li>
        <li>
          <span class="badge bad">Drill failed</span> The Scout's last restore drill could not read the newest
          snapshot back (its error is the badge's tooltip): check the disk, back up again and drill again.
        </li>
        <li>
          <span class="badge bad">Not proven recently</span> No restore drill passed in the last 14 days
          (twice the Scouts' default weekly drill schedule; the Station does not know a Scout's own).
        </li>
      </ul>
    </details>
  );
}

function ScoutCard({
  scout,
  isAdmin,
  targets,
  onChanged,
}: {
  scout: Scout;
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  return (
    <section class="card scout" aria-label={`Scout ${scout.scout_id}`}>
      <h2>
        Scout {scout.scout_id}{' '}
        <span class="muted count">
          {scout.instances.length} instance{scout.instances.length === 1 ? '' : 's'}
        </span>
      </h2>
      {scout.instances.map((instance) => (
        <InstanceBlock
          key={instance.scout_instance_id}
          scoutId={scout.scout_id}
          instance={instance}
          isAdmin={isAdmin}
          targets={targets}
          onChanged={onChanged}
        />
      ))}
    </section>
  );
}

function InstanceBlock({
  scoutId,
  instance,
  isAdmin,
  targets,
  onChanged,
}: {
  scoutId: string;
  instance: Instance;
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  const [deleting, setDeleting] = useState(false);
  const [minting, setMinting] = useState(false);
  return (
    <article class="instance" aria-label={`Instance ${instance.scout_instance_id}`}>
      <header class="instance-head">
        <h3>
          Instance <code>{instance.scout_instance_id}</code>
        </h3>
        {isAdmin ? (
          <div class="actions">
            <button type="button" onClick={() => setMinting(true)}>
              Mint a recovery token
            </button>
            <button type="button" class="danger-outline" onClick={() => setDeleting(true)}>
              Delete instance
            </button>
          </div>
        ) : null}
      </header>
      <dl class="facts inline-facts">
        <dt>Last seen</dt>
        <dd>
          <Time value={instance.last_seen_at} />
        </dd>
        <dt>Scout key</dt>
        <dd>
          {instance.key_fingerprint ? (
            <code title={instance.key_fingerprint}>{instance.key_fingerprint.slice(0, 16)}…</code>
          ) : (
            'not reported'
          )}
        </dd>
        {instance.advertised_url ? (
          <>
            <dt>Advertised at</dt>
            <dd>
              <code>{instance.advertised_url}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {instance.jobs.length === 0 ? <p class="muted">No snapshots stored for this instance.</p> : null}
      {instance.jobs.map((job) => (
        <JobCard
          key={job.job_name}
          scoutId={scoutId}
          instanceId={instance.scout_instance_id}
          job={job}
          isAdmin={isAdmin}
          targets={targets}
          onChanged={onChanged}
        />
      ))}
      {minting ? (
        <RecoveryTokenDialog scoutId={scoutId} instance={instance} onClose={() => setMinting(false)} />
      ) : null}
      {deleting ? (
        <InstanceDeleteDialog
          scoutId={scoutId}
          instance={instance}
          onClose={() => setDeleting(false)}
          onDeleted={onChanged}
        />
      ) : null}
    </article>
  );
}
