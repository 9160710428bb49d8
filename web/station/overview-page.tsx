/**
 * `/`: per Scout, its instances and their jobs, one row each, the jobs that need a look first
 * (failing, then stale). Jobs come a page at a time from GET /api/jobs (the Station rates
 * them and orders hosts with such a job first), more on scroll or on "Show more jobs"; a job's
 * snapshots open on demand; filters by text and by health; and the Station's storage.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobHealth, JobHealthRules, JobSummary } from '../../src/shared/protocol/jobs.ts';
import type { Overview } from '../../src/shared/protocol/overview.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Time } from '../common/ui.tsx';
import { MISSING_RULE, notProvenRule, staleRule, UNUSUAL_RULE } from './health.ts';
import { InstanceDeleteDialog, type InstanceJobs } from './instance-delete.tsx';
import { type JobFilters, useJobPages } from './job-pages.ts';
import { JobRow } from './job-row.tsx';
import { RecoveryTokenDialog } from './recovery-token-dialog.tsx';
import { ReplicaCard, ReplicasCard } from './replication-card.tsx';
import { StorageCard } from './storage-card.tsx';

export const REFRESH_MS = 15_000;
/** Until the first answer says otherwise. */
const HEALTH_NAMES: Record<JobHealth, string> = {
  failing: 'Failing',
  stale: 'Stale',
  not_proven: 'Not proven',
  ok: 'OK',
};

interface ScoutGroup {
  scoutId: string;
  instances: InstanceJobs[];
  failing: number;
  stale: number;
  jobCount: number;
}

/** Consecutive jobs of one Scout, and of one instance in it (the Station sends them together). */
function group(jobs: JobSummary[]): ScoutGroup[] {
  const scouts: ScoutGroup[] = [];
  for (const job of jobs) {
    let scout = scouts.at(-1);
    if (scout?.scoutId !== job.scout_id) {
      scout = { scoutId: job.scout_id, instances: [], failing: 0, stale: 0, jobCount: 0 };
      scouts.push(scout);
    }
    let instance = scout.instances.at(-1);
    if (instance?.scout_instance_id !== job.scout_instance_id) {
      instance = { scout_instance_id: job.scout_instance_id, jobs: [] };
      scout.instances.push(instance);
    }
    instance.jobs.push(job);
    scout.jobCount += 1;
    if (job.health === 'failing') scout.failing += 1;
    if (job.health === 'stale') scout.stale += 1;
  }
  return scouts;
}

/** Calls `onVisible` when the element scrolls into view (loads the next page). */
function useWhenVisible(onVisible: () => void) {
  const ref = useRef<HTMLDivElement>(null);
  const callback = useRef(onVisible);
  callback.current = onVisible;
  useEffect(() => {
    const element = ref.current;
    if (!element || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) callback.current();
    });
    observer.observe(element);
    return () => observer.disconnect();
  });
  return ref;
}

export function OverviewPage() {
  const { user } = useSession();
  const storage = usePoll(() => api.get<Overview>(stationPaths.overview('storage')), REFRESH_MS);
  const [text, setText] = useState('');
  const [health, setHealth] = useState<JobHealth | ''>('');
  // The text filter asks the Station once typing pauses.
  const [q, setQ] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setQ(text), 250);
    return () => clearTimeout(timer);
  }, [text]);
  const filters: JobFilters = useMemo(() => ({ q, health }), [q, health]);
  const pages = useJobPages(filters, REFRESH_MS);
  // The health rules come with every page (decided on the Station, src/station/services/job-health.ts).
  const rules = pages.last?.rules;
  const scouts = useMemo(() => group(pages.jobs), [pages.jobs]);
  const filtered = (pages.loadedFor?.q ?? '').trim() !== '' || Boolean(pages.loadedFor?.health);
  const nothingStored = pages.last !== null && pages.last.total === 0 && !filtered;
  const remaining = (pages.last?.total ?? 0) - pages.jobs.length;
  const hasMore = Boolean(pages.last?.next_cursor);
  const sentinel = useWhenVisible(() => {
    if (hasMore && !pages.loading) void pages.more();
  });
  const counts = pages.last?.counts;
  const reloadAll = () => {
    void pages.reload();
    void storage.reload();
  };

  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <p class="muted" aria-live="polite">
          {pages.loadedAt ? (
            <>
              Updated <Time value={pages.loadedAt} />; refreshes every {REFRESH_MS / 1000} s.
            </>
          ) : pages.loading ? (
            'Loading…'
          ) : null}
        </p>
        <button type="button" onClick={reloadAll} disabled={pages.loading}>
          Refresh now
        </button>
      </div>
      <ErrorText error={pages.error ?? storage.error} />
      {storage.data?.storage ? (
        <StorageCard storage={storage.data.storage} isAdmin={user.is_admin} onChanged={storage.reload} />
      ) : null}
      <ReplicaCard refreshMs={REFRESH_MS} isAdmin={user.is_admin} />
      <ReplicasCard refreshMs={REFRESH_MS} />
      {nothingStored ? (
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
      {pages.last !== null && !nothingStored ? (
        <div class="overview-tools">
          <div class="filter">
            <label for="overview-filter">Filter by host or job</label>
            <input
              id="overview-filter"
              type="search"
              value={text}
              placeholder="host, instance or job name"
              onInput={(event) => setText((event.target as HTMLInputElement).value)}
            />
          </div>
          <div class="filter">
            <label for="overview-health">Health</label>
            <select
              id="overview-health"
              value={health}
              onChange={(event) => setHealth((event.target as HTMLSelectElement).value as JobHealth | '')}
            >
              <option value="">All jobs</option>
              {(Object.keys(HEALTH_NAMES) as JobHealth[]).map((h) => (
                <option key={h} value={h}>
                  {HEALTH_NAMES[h]}
                  {counts ? ` (${counts[h]})` : ''}
                </option>
              ))}
            </select>
          </div>
          <Legend rules={pages.last.rules} />
        </div>
      ) : null}
      {filtered && pages.last?.total === 0 ? (
        <p class="card muted" role="status">
          No job or host matches {pages.loadedFor?.q.trim() ? <q>{pages.loadedFor.q.trim()}</q> : null}
          {pages.loadedFor?.health ? ` (${HEALTH_NAMES[pages.loadedFor.health].toLowerCase()} jobs)` : null}.
        </p>
      ) : null}
      {rules &&
        scouts.map((scout, i) => (
          <ScoutCard
            // A Scout split across a page boundary is one group: its key is its first job's place.
            key={`${scout.scoutId}-${i}`}
            scout={scout}
            rules={rules}
            loadedAt={pages.loadedAt}
            isAdmin={user.is_admin}
            onChanged={reloadAll}
          />
        ))}
      {hasMore ? (
        <div class="more-jobs" ref={sentinel}>
          <button type="button" onClick={() => void pages.more()} disabled={pages.loading}>
            {pages.loading ? 'Loading…' : `Show more jobs (${remaining} more)`}
          </button>
        </div>
      ) : null}
    </>
  );
}

function Legend({ rules }: { rules: JobHealthRules }) {
  return (
    <details class="legend card">
      <summary>What the flags mean</summary>
      <ul>
        <li>
          <span class="badge warn">Stale</span> {staleRule(rules).replace(/^Stale: /, '')}
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
          <span class="badge bad">Not proven recently</span> {notProvenRule(rules)}
        </li>
      </ul>
    </details>
  );
}

function ScoutCard({
  scout,
  rules,
  loadedAt,
  isAdmin,
  onChanged,
}: {
  scout: ScoutGroup;
  rules: JobHealthRules;
  loadedAt: number | null;
  isAdmin: boolean;
  onChanged: () => void;
}) {
  const { instances } = scout;
  return (
    <section class="card scout" aria-label={`Scout ${scout.scoutId}`}>
      <h2>
        Scout {scout.scoutId}{' '}
        <span class="muted count">
          {instances.length} instance{instances.length === 1 ? '' : 's'} · {scout.jobCount} job
          {scout.jobCount === 1 ? '' : 's'}
        </span>{' '}
        {scout.failing > 0 ? <span class="badge bad">{scout.failing} failing</span> : null}{' '}
        {scout.stale > 0 ? <span class="badge warn">{scout.stale} stale</span> : null}
      </h2>
      {instances.map((instance) => (
        <InstanceBlock
          key={instance.scout_instance_id}
          scoutId={scout.scoutId}
          instance={instance}
          rules={rules}
          loadedAt={loadedAt}
          isAdmin={isAdmin}
          onChanged={onChanged}
        />
      ))}
    </section>
  );
}

function InstanceBlock({
  scoutId,
  instance,
  rules,
  loadedAt,
  isAdmin,
  onChanged,
}: {
  scoutId: string;
  instance: InstanceJobs;
  rules: JobHealthRules;
  loadedAt: number | null;
  isAdmin: boolean;
  onChanged: () => void;
}) {
  const [deleting, setDeleting] = useState(false);
  const [minting, setMinting] = useState(false);
  const facts = instance.jobs[0]?.instance;
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
          <Time value={facts?.last_seen_at ?? null} />
        </dd>
        <dt>Scout key</dt>
        <dd>
          {facts?.key_fingerprint ? (
            <code title={facts.key_fingerprint}>{facts.key_fingerprint.slice(0, 16)}…</code>
          ) : (
            'not reported'
          )}
        </dd>
        {facts?.advertised_url ? (
          <>
            <dt>Advertised at</dt>
            <dd>
              <code>{facts.advertised_url}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {instance.jobs.map((job) => (
        <JobRow
          key={job.job_name}
          job={job}
          rules={rules}
          loadedAt={loadedAt}
          isAdmin={isAdmin}
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
