/**
 * `/`: per Scout, its instances and their jobs, one row each, the jobs that need a look first
 * (failing, then stale); a job's snapshots open on demand; a filter by host or job; and the
 * Station's storage. Built to stay light at a small office's size (10,000 snapshots).
 */
import { useMemo, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  Overview,
  OverviewInstance,
  OverviewJob,
  OverviewScout,
} from '../../src/shared/protocol/overview.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Time } from '../common/ui.tsx';
import { type JobHealth, jobHealth, MISSING_RULE, STALE_RULE, UNUSUAL_RULE } from './health.ts';
import { InstanceDeleteDialog } from './instance-delete.tsx';
import { JobRow } from './job-row.tsx';
import { RecoveryTokenDialog } from './recovery-token-dialog.tsx';
import { ReplicaCard, ReplicasCard } from './replication-card.tsx';
import type { InstanceRef } from './restore-dialog.tsx';
import { StorageCard } from './storage-card.tsx';

export const REFRESH_MS = 15_000;

interface RatedJob {
  job: OverviewJob;
  health: JobHealth;
}
interface RatedInstance {
  instance: OverviewInstance;
  jobs: RatedJob[];
}
interface RatedScout {
  scout: OverviewScout;
  instances: RatedInstance[];
  /** The worst job's severity (see jobHealth). */
  severity: number;
  failing: number;
  stale: number;
  jobCount: number;
}

const byName = (a: string, b: string) => a.localeCompare(b);

/**
 * Scouts, instances and jobs rated and ordered: within an instance the jobs that need a look
 * first, then by name; Scouts with such a job before the others. `filter` keeps the Scouts
 * whose ID matches and, elsewhere, the jobs whose name matches (case-insensitive).
 */
function rate(scouts: OverviewScout[], filter: string, now: number): RatedScout[] {
  const needle = filter.trim().toLowerCase();
  const rated: RatedScout[] = [];
  for (const scout of scouts) {
    const wholeScout = needle === '' || scout.scout_id.toLowerCase().includes(needle);
    const instances: RatedInstance[] = [];
    for (const instance of [...scout.instances].sort((a, b) =>
      byName(a.scout_instance_id, b.scout_instance_id),
    )) {
      const wholeInstance = wholeScout || instance.scout_instance_id.toLowerCase().includes(needle);
      const jobs = instance.jobs
        .filter((job) => wholeInstance || job.job_name.toLowerCase().includes(needle))
        .map((job) => ({ job, health: jobHealth(job, now) }))
        .sort((a, b) => b.health.severity - a.health.severity || byName(a.job.job_name, b.job.job_name));
      if (wholeInstance || jobs.length > 0) instances.push({ instance, jobs });
    }
    if (instances.length === 0) continue;
    const all = instances.flatMap((i) => i.jobs);
    rated.push({
      scout,
      instances,
      severity: Math.max(0, ...all.map((j) => j.health.severity)),
      failing: all.filter((j) => j.health.severity === 3).length,
      stale: all.filter((j) => j.health.severity === 2).length,
      jobCount: all.length,
    });
  }
  return rated.sort((a, b) => b.severity - a.severity || byName(a.scout.scout_id, b.scout.scout_id));
}

export function OverviewPage() {
  const { user } = useSession();
  const poll = usePoll(() => api.get<Overview>(stationPaths.overview()), REFRESH_MS);
  const [filter, setFilter] = useState('');
  const all = poll.data?.scouts ?? [];
  // Rated once per answer and filter (not per render of a row), against the time of the answer.
  const scouts = useMemo(() => rate(all, filter, Date.now()), [poll.data, poll.loadedAt, filter]);
  const targets: InstanceRef[] = useMemo(
    () =>
      [...all]
        .sort((a, b) => byName(a.scout_id, b.scout_id))
        .flatMap((scout) =>
          scout.instances.map((i) => ({ scoutId: scout.scout_id, instanceId: i.scout_instance_id })),
        ),
    [poll.data],
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
      <ReplicaCard refreshMs={REFRESH_MS} isAdmin={user.is_admin} />
      <ReplicasCard refreshMs={REFRESH_MS} />
      {poll.data && all.length === 0 ? (
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
      {all.length > 0 ? (
        <div class="overview-tools">
          <div class="filter">
            <label for="overview-filter">Filter by host or job</label>
            <input
              id="overview-filter"
              type="search"
              value={filter}
              placeholder="host, instance or job name"
              onInput={(event) => setFilter((event.target as HTMLInputElement).value)}
            />
          </div>
          <Legend />
        </div>
      ) : null}
      {all.length > 0 && scouts.length === 0 ? (
        <p class="card muted" role="status">
          No job or host matches <q>{filter}</q>.
        </p>
      ) : null}
      {scouts.map((rated) => (
        <ScoutCard
          key={rated.scout.scout_id}
          rated={rated}
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
  rated,
  isAdmin,
  targets,
  onChanged,
}: {
  rated: RatedScout;
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  const { scout, instances } = rated;
  return (
    <section class="card scout" aria-label={`Scout ${scout.scout_id}`}>
      <h2>
        Scout {scout.scout_id}{' '}
        <span class="muted count">
          {instances.length} instance{instances.length === 1 ? '' : 's'} · {rated.jobCount} job
          {rated.jobCount === 1 ? '' : 's'}
        </span>{' '}
        {rated.failing > 0 ? <span class="badge bad">{rated.failing} failing</span> : null}{' '}
        {rated.stale > 0 ? <span class="badge warn">{rated.stale} stale</span> : null}
      </h2>
      {instances.map(({ instance, jobs }) => (
        <InstanceBlock
          key={instance.scout_instance_id}
          scoutId={scout.scout_id}
          instance={instance}
          jobs={jobs}
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
  jobs,
  isAdmin,
  targets,
  onChanged,
}: {
  scoutId: string;
  instance: OverviewInstance;
  jobs: RatedJob[];
  isAdmin: boolean;
  targets: InstanceRef[];
  onChanged: () => void;
}) {
  const [deleting, setDeleting] = useState(false);
  const [minting, setMinting] = useState(false);
  const where = { scoutId, instanceId: instance.scout_instance_id };
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
      {jobs.map(({ job, health }) => (
        <JobRow
          key={job.job_name}
          job={job}
          health={health}
          where={where}
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
